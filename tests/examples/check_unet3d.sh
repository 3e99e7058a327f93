#!/usr/bin/env bash
# Usage: check_unet3d.sh TESSERA SOURCE_DIR WORKDIR — the U-Net app at CI size: `tessera datagen
# cells` writes 16³ volumes, examples/unet3d/unet3d_cells_tiny.json trains on them, and the
# validation segmentation must beat the trivial ones: its foreground (cell interior) IoU must
# exceed that of predicting "interior" everywhere (1 − the validation membrane fraction, which
# datagen reports; predicting "membrane" everywhere scores 0) by at least 0.05, and the
# validation loss must fall.
set -euo pipefail
tessera=$1 src=$2 work=$3
rm -rf "$work"; mkdir -p "$work"; cd "$work"
"$tessera" datagen cells --output runs/cells_tiny --size 16 --cell-size 8 --membrane 1.2 --samples 32 \
  --validation-samples 8 --no-progress --kokkos-disable-warnings | tee datagen.out
membrane=$(sed -n 's/.*, \([0-9.]*\)% of the validation voxels.*/\1/p' datagen.out)
[[ -n "$membrane" ]] || { echo "datagen did not report the validation membrane fraction"; exit 1; }
"$tessera" train "$src/examples/unet3d/unet3d_cells_tiny.json" --no-progress --metrics run.jsonl \
  --kokkos-disable-warnings | tee run.out
/usr/bin/python3 - run.jsonl "$membrane" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
validation = [r for r in records if r["event"] == "validation"]
all_interior = 1.0 - float(sys.argv[2]) / 100.0
first, last = validation[0], validation[-1]
print(f"validation loss {first['loss']:.4f} -> {last['loss']:.4f}; foreground IoU {last['foreground_iou']:.3f}, "
      f"dice {last['foreground_dice']:.3f}; predicting interior everywhere: IoU {all_interior:.3f}")
assert last["loss"] < first["loss"], "the validation loss did not fall"
assert last["foreground_iou"] >= all_interior + 0.05, "foreground IoU not above predicting interior everywhere"
PY
