#!/usr/bin/env bash
# Usage: check_plan_commands.sh TESSERA EXAMPLE WORKDIR MPIEXEC MPIFLAGS — the performance model
# end to end on 2 ranks: a quick calibration; `tessera plan` measures the layers it needs into
# the profile and writes a config whose layout trains; its predicted peak memory per rank is
# within 35% of the measured one for the data-parallel layout; `--distribution auto` plans at
# start-up and logs the plan; and the refusals: "auto" on 2 ranks without a profile (on both
# ranks), a memory limit nothing fits (exit 3, the smallest layout named), a corrupt profile,
# and --no-measure with times missing.
set -euo pipefail
tessera=$1 example=$2 work=$3 mpiexec=$4 flags=${5//;/ }
rm -rf "$work"; mkdir -p "$work"; cd "$work"
run2() {
  # shellcheck disable=SC2086
  "$mpiexec" -n 2 $flags "$tessera" "$@" --kokkos-disable-warnings
}
# A short run of the example: one stored batch of 8 samples, 4 steps, no validation.
python3 - "$example" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["data"].update({"samples": 8, "validation_samples": 0})
c["training"].update({"batch_size": 8, "epochs": 4, "log_every": 1})
c["optimizer"].pop("schedule", None)
json.dump(c, open("tiny.json", "w"))
PY
run2 calibrate --quick --output machine.json >calibrate.log

run2 plan tiny.json --ranks 2 --machine machine.json --json plan.json --write-config planned.json | tee plan.log
grep -q "^planned " plan.log && grep -q "^data parallel " plan.log || { echo "no totals"; exit 1; }
python3 - <<'PY'
import json
p = json.load(open("machine.json"))
assert len(p["layer_times"]) >= 10, f"the plan should have saved its layer times, got {len(p['layer_times'])}"
plan = json.load(open("plan.json"))
assert plan["ranks"] == 2 and plan["chosen"]["valid"] and plan["chosen"]["step_time_s"] > 0, plan
c = json.load(open("planned.json"))
assert all(l["distribution"] for l in c["model"]["layers"]), c
PY
# A second plan measures nothing new.
run2 plan tiny.json --ranks 2 --machine machine.json --no-measure >plan2.log
run2 train planned.json --quiet --metrics planned.jsonl
grep -q '"event":"end"' planned.jsonl

# Memory: predicted against the measured peak of the largest rank, data parallel.
run2 plan tiny.json --ranks 2 --machine machine.json --given --json given.json >/dev/null
run2 train tiny.json --quiet --metrics given.jsonl
python3 - <<'PY'
import json
predicted = json.load(open("given.json"))["chosen"]["memory_bytes"] / 2**20
end = next(json.loads(l) for l in open("given.jsonl") if '"event":"end"' in l)
measured = end["peak_rss_mb_max_rank"]
error = abs(predicted - measured) / measured
print(f"memory per rank: predicted {predicted:.0f} MiB, measured {measured:.0f} MiB, error {error:.2f}")
assert error < 0.35, error
PY

# "auto": planned at start-up, shown in the header and logged.
run2 train tiny.json --distribution auto --machine machine.json --metrics auto.jsonl --max-steps 2 | tee auto.log
grep -q "layout:    planned" auto.log || { echo "no planned layout in the run header"; exit 1; }
grep -q '"event":"plan"' auto.jsonl || { echo "no plan record in the metrics"; exit 1; }

# Refusals.
# Both ranks say why and the job exits non-zero.
set +e
# shellcheck disable=SC2086
out=$(env -u TESSERA_MACHINE "$mpiexec" -n 2 $flags "$tessera" train tiny.json --distribution auto --quiet 2>&1)
status=$?
set -e
[[ $status -ne 0 ]] || { echo "auto without a profile should fail"; exit 1; }
for rank in 0 1; do
  grep -q "rank $rank.*needs a machine profile.*tessera calibrate" <<<"$out" || { echo "$out"; exit 1; }
done
set +e
run2 plan tiny.json --ranks 2 --machine machine.json --memory-limit 1MiB --no-measure >tight.log 2>&1
status=$?
set -e
[[ $status -eq 3 ]] || { echo "expected exit 3 when nothing fits, got $status"; cat tight.log; exit 1; }
grep -q "no layout fits in 1.0 MiB per rank; the smallest found needs" tight.log || { cat tight.log; exit 1; }
echo '{"format_version": 1, "name": ' >corrupt.json
if "$tessera" plan tiny.json --ranks 2 --machine corrupt.json >corrupt.log 2>&1; then exit 1; fi
grep -q "corrupt.json" corrupt.log || { cat corrupt.log; exit 1; }
python3 -c '
import json; p = json.load(open("machine.json")); p["layer_times"] = {}; json.dump(p, open("empty.json", "w"))'
if "$tessera" plan tiny.json --ranks 2 --machine empty.json --no-measure >nomeasure.log 2>&1; then exit 1; fi
grep -q "no-measure.*has no time for" nomeasure.log || { cat nomeasure.log; exit 1; }
test -z "$(find . -name '*.tmp*')"  # nothing half-written left behind
echo "plan: layers measured into the profile, a planned layout that trains, memory within 35%, auto logged, refusals clear"
