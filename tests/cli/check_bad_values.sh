#!/usr/bin/env bash
# Usage: check_bad_values.sh TESSERA WORKDIR — each class of bad input of the fourth round, fed
# as a user typed it, to the real command: integers whose products would overflow, NaN and
# infinities, wrapping indices, data outside a layer's or loss's domain, messages that must name
# their source, and outputs that must be refused before the work. Each must end with the exit
# status docs/failure_behaviour.md gives (2: the command line; 1: anything else) and a message
# naming the flag, key, file or layer.
set -uo pipefail
tessera=$1 work=$2
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work"; mkdir -p "$work"
tiny=$source_dir/examples/cosmoflow_tiny.json
failures=0

# expect STATUS PATTERN COMMAND...: COMMAND exits with STATUS and prints PATTERN (extended regex).
expect() {
  local status=$1 pattern=$2; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [[ $rc -ne $status ]] || ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL (exit $rc, expected $status and /$pattern/): $*"; echo "$out" | tail -n 3; failures=$((failures + 1))
  else
    echo "ok (exit $rc): $(grep -E -- "$pattern" <<<"$out" | head -n 1)"
  fi
}

# 1. Integers that enter products: bounded like the keys they override, named as flags.
expect 2 "^--accumulate: expected an integer from 1 to 1048576, got 4611686018427387904" \
  "$tessera" train "$tiny" --accumulate 4611686018427387904
expect 2 "^--accumulate: expected an integer from 1 to 1048576, got '99999999999999999999'" \
  "$tessera" train "$tiny" --accumulate 99999999999999999999
expect 2 "^--epochs: expected an integer from 1 to 1073741824, got '99999999999999999999'" \
  "$tessera" train "$tiny" --epochs 99999999999999999999
expect 1 "--batch-size: batch size 5000 exceeds the 1024 training samples" \
  "$tessera" train "$tiny" --batch-size 5000
# 2. NaN and infinity never pass a range check.
expect 2 "^--noisy-truth: expected a finite number in \[0, 1\), got 'nan'" "$tessera" score "$tiny" --noisy-truth nan
expect 2 "^--threshold: expected a finite number in \[-1e\+06, 1e\+06\], got 'nan'" \
  "$tessera" score "$tiny" --components "$tiny" --threshold nan
expect 1 "--balance: .*weight 0: expected a finite number in \[1e-06, 1e\+06\], got 'inf'" \
  "$tessera" train "$tiny" --balance inf,1
expect 2 "^--min-gain: expected a finite number in \[0, 1\], got 'inf'" \
  "$tessera" plan "$tiny" --ranks 1 --min-gain inf
# 3. Indices do not wrap.
expect 2 "^--channel: expected an integer from 0 to 1048576, got -3" "$tessera" score "$tiny" --channel -3
# 4. Data outside a layer's documented domain: the first batch, naming the layer and the data.
expect 1 "layers\[0\]: layer 'h' \(bcpnn\) takes input values in \[0, 1\], but the batch of step 0 of the training data \(synthetic_fields" \
  "$tessera" train "$source_dir/tests/cli/bcpnn_outside_domain.json" --no-progress
# 5. Messages name their source.
sed 's/"lr": 0.002,/"lr": 0.002, "lr_scaling": {"rule": "sqrt"},/' "$tiny" >"$work/no_reference.json"
expect 1 "optimizer\.lr_scaling\.reference_batch: required key is missing" "$tessera" train "$work/no_reference.json"
expect 1 "--precision: precision \"fp64\" is not one of fp32, bf16, fp16, tf32" "$tessera" train "$tiny" --precision fp64
printf '%s\n' '{"event":"start","model":"m"}' '{"event":"train","step":8,"loss":"x"}' >"$work/typed.jsonl"
expect 1 "typed\.jsonl:2: the \"train\" record's \"loss\" should be a number, got \"x\"" "$tessera" report "$work/typed.jsonl"
# 6. Outputs are checked before the work.
touch "$work/a_file"
expect 1 "nodir/run\.ckpt: cannot write --checkpoint \(checkpoints\): directory 'nodir' does not exist" \
  "$tessera" train "$tiny" --checkpoint nodir/run.ckpt
expect 1 "^tessera: error \(rank 0\): $work: cannot write --metrics \(the metrics log\): it is a directory" \
  "$tessera" train "$tiny" --metrics "$work"
expect 1 "nodir/plan\.json: cannot write --json \(the plan\)" "$tessera" plan "$tiny" --ranks 1 --json nodir/plan.json
expect 1 "nodir/ops\.json: cannot write --output \(the result\)" "$tessera" bench ops "$tiny" --output nodir/ops.json
expect 1 "nodir/r\.html: cannot write --output \(the report\)" "$tessera" report "$work/typed.jsonl" --output nodir/r.html
expect 1 "$work/a_file/data: cannot create --output \(the data set\): '$work/a_file' is not a writable directory" \
  "$tessera" datagen cosmoflow --output "$work/a_file/data" --samples 2 --size 8
expect 1 "$work/a_file: cannot write --output \(the search's folder\): it is not a directory" \
  "$tessera" search "$source_dir/examples/search/cosmoflow_tiny.json" --output "$work/a_file"
expect 1 "nodir/p\.h5: cannot write --output \(the predictions\)" \
  "$tessera" predict "$tiny" --checkpoint "$tiny" --input "$tiny" --output nodir/p.h5
expect 1 "nodir/s\.h5: cannot write --output \(the segmentation\)" \
  "$tessera" ffn segment "$tiny" --untrained --volume "$tiny" --output nodir/s.h5
[[ -e nodir ]] && { echo "FAIL: something created nodir"; failures=$((failures + 1)); }

if [[ $failures -gt 0 ]]; then echo "$failures check(s) failed"; exit 1; fi
echo "every bad value refused as documented"
