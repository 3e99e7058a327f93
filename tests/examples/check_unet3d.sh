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
# The trained U-Net's output for one held-out volume, as `tessera predict` writes it, scored as
# the connected components of its interior probability (the FFN app's baseline), and at a size
# it was not trained at (a fully convolutional model runs on any multiple of its pooling).
"$tessera" train "$src/examples/unet3d/unet3d_cells_tiny.json" --no-progress --max-steps 8 \
  --checkpoint unet.ckpt --kokkos-disable-warnings > /dev/null
volume=runs/cells_tiny/validation/sample_000000.h5
"$tessera" predict "$src/examples/unet3d/unet3d_cells_tiny.json" --checkpoint unet.ckpt --input "$volume" \
  --output prediction.h5 --kokkos-disable-warnings
"$tessera" score "$volume" --components prediction.h5 --threshold 0.5 --json --kokkos-disable-warnings > components.json
"$tessera" datagen cells --output runs/cells24 --size 24 --cell-size 8 --membrane 1.2 --samples 1 \
  --validation-samples 1 --no-progress --kokkos-disable-warnings > /dev/null
"$tessera" predict "$src/examples/unet3d/unet3d_cells_tiny.json" --checkpoint unet.ckpt \
  --input runs/cells24/validation/sample_000000.h5 --output prediction24.h5 --kokkos-disable-warnings
if "$tessera" score "$volume" --components prediction.h5 --channel 2 --kokkos-disable-warnings 2> channel.err; then
  echo "a channel the map lacks was accepted"; exit 1
fi
grep -q -- "--channel: prediction.h5:predictions has 2 channel(s), 0 to 1; there is no channel 2" channel.err
/usr/bin/python3 - <<'PY'
import json
import h5py
c = json.load(open("components.json"))
print(f"components of the predicted interior: VI {c['vi']:.3f}, adapted Rand error {c['rand_error']:.3f}")
assert c["voxels"] > 0 and c["vi"] == c["vi"], "no score"
for name, size in (("prediction.h5", 16), ("prediction24.h5", 24)):
    f = h5py.File(name, "r")
    p = f["predictions"][...]
    assert p.shape == (size, size, size, 2), p.shape
    assert abs(p.sum(axis=-1) - 1).max() < 1e-5, "class probabilities do not sum to 1"
    assert (f["targets"][...] == p.argmax(axis=-1)).all(), "targets are not the most likely class"
PY
