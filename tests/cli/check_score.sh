#!/usr/bin/env bash
# Usage: check_score.sh TESSERA WORKDIR — `tessera score` on a `datagen cells` volume: the true
# instances against themselves score 0, the components of the true interior score near 0 and
# worse once voxels are flipped, and a missing dataset is refused by name.
set -euo pipefail
tessera=$1 work=$2
rm -rf "$work"; mkdir -p "$work"
"$tessera" datagen cells --output "$work/cells" --size 24 --cell-size 8 --samples 1 --validation-samples 0 --quiet
file=$work/cells/train/sample_000000.h5
"$tessera" score "$file" --segmentation "$file" --segmentation-dataset instances --json | tee "$work/self.json"
"$tessera" score "$file" --noisy-truth 0 --json | tee "$work/clean.json"
"$tessera" score "$file" --noisy-truth 0.2 --seed 3 --json | tee "$work/noisy.json"
"$tessera" score "$file" --noisy-truth 0.2 --seed 3 | tee "$work/noisy.txt"
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
self_, clean, noisy = (json.load(open(f"{work}/{n}.json")) for n in ("self", "clean", "noisy"))
assert self_["vi"] == 0 and self_["rand_error"] == 0, self_
assert self_["true_objects"] == self_["segments"] >= 20, self_
# Membranes separate every cell, so the interior's components are the cells.
assert clean["vi"] < 0.05 and clean["rand_error"] < 0.02, clean
assert noisy["vi"] > clean["vi"] + 0.5 and noisy["rand_error"] > clean["rand_error"] + 0.1, noisy
print("scores ok:", self_["vi"], clean["vi"], noisy["vi"])
PY
grep -q "variation of information .* bits (split .*, merge .*); adapted Rand error" "$work/noisy.txt"
# The components of a stored map above a threshold: the file's own labels (1 = interior).
"$tessera" score "$file" --components "$file" --components-dataset targets --threshold 0.5 --json \
  | tee "$work/components.json"
grep -q '"vi": 0.000000' "$work/components.json"
# A file of several samples: each is read by --sample, and one past the end is refused.
"$tessera" datagen cells --output "$work/stacked" --size 16 --cell-size 8 --samples 2 --validation-samples 0 \
  --layout samples-per-file --samples-per-file 2 --quiet
stacked=$work/stacked/train_0000.h5
"$tessera" score "$stacked" --sample 1 --segmentation "$stacked" --segmentation-dataset instances --json \
  | grep -q '"vi": 0.000000'
if "$tessera" score "$stacked" --sample 2 --noisy-truth 0 2>"$work/past.txt"; then echo "sample 2 of 2 read"; exit 1; fi
grep -q "holds 2 sample(s); there is no sample 2" "$work/past.txt"
if "$tessera" score "$file" --segmentation "$file" --segmentation-dataset nope 2>"$work/err.txt"; then
  echo "a missing dataset was accepted"; exit 1
fi
grep -q "no dataset 'nope'" "$work/err.txt"
if "$tessera" score "$file" 2>"$work/none.txt"; then echo "score without a segmentation ran"; exit 1; fi
grep -q "nothing to score" "$work/none.txt"
