#!/usr/bin/env bash
# Usage: check_ffn.sh TESSERA SOURCE_DIR WORKDIR — the FFN app at CI size: `tessera datagen cells`
# writes 24³ volumes with object ids, examples/ffn/ffn_cells_tiny.json trains an FFN on them (its
# FOVs moved by its own predictions), and `tessera ffn segment` flood-fills a held-out volume.
# The trained network's variation of information must be below 0.8 of the untrained network's
# (which, never reaching the segment threshold, leaves everything unsegmented); the written
# segmentation must score the same through `tessera score`; the metrics log must record how far
# the FOVs moved.
set -euo pipefail
tessera=$1 src=$2 work=$3
rm -rf "$work"; mkdir -p "$work"; cd "$work"
quiet=(--kokkos-disable-warnings)
"$tessera" datagen cells --output runs/cells24 --size 24 --cell-size 8 --membrane 1.2 --samples 8 \
  --validation-samples 2 --no-progress "${quiet[@]}" > datagen.out
"$tessera" train "$src/examples/ffn/ffn_cells_tiny.json" --no-progress --metrics run.jsonl \
  --checkpoint tiny.ckpt "${quiet[@]}" | tail -n 2
volume=runs/cells24/validation/sample_000000.h5
"$tessera" ffn segment "$src/examples/ffn/ffn_cells_tiny.json" --checkpoint tiny.ckpt --volume "$volume" \
  --min-voxels 20 --output segmentation.h5 --json "${quiet[@]}" > trained.json
"$tessera" ffn segment "$src/examples/ffn/ffn_cells_tiny.json" --untrained --volume "$volume" \
  --min-voxels 20 --json "${quiet[@]}" > untrained.json
"$tessera" score "$volume" --segmentation segmentation.h5 --json "${quiet[@]}" > rescored.json
/usr/bin/python3 - <<'PY'
import json
trained, untrained, rescored = (json.load(open(f)) for f in ("trained.json", "untrained.json", "rescored.json"))
moves = [json.loads(line) for line in open("run.jsonl") if '"ffn_moves"' in line]
print(f"trained: VI {trained['vi']:.3f} (split {trained['vi_split']:.3f}, merge {trained['vi_merge']:.3f}), "
      f"{trained['objects']} objects for {trained['true_objects']} cells; untrained: VI {untrained['vi']:.3f}; "
      f"FOVs per training example by epoch: {[round(m['fovs_per_example'], 2) for m in moves]}")
assert trained["vi"] < 0.8 * untrained["vi"], "the trained FFN segments no better than an untrained one"
assert abs(rescored["vi"] - trained["vi"]) < 1e-6, "the written segmentation scores differently"
assert len(moves) == 2 and all(m["examples"] > 0 for m in moves), "no ffn_moves record per epoch"
PY
