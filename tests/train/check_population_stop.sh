#!/usr/bin/env bash
# Usage: check_population_stop.sh TESSERA CONFIG WORKDIR MPIEXEC MPIFLAGS
# A population of 2 trainers on 2 ranks; SIGTERM to one rank's process only. Both trainers
# stop after the same step (none is left waiting at a tournament), the population checkpoint
# names one complete file per trainer of that step, no temporary file is left, and the printed
# resume command continues with the uninterrupted run's losses and tournaments.
set -euo pipefail
tessera=$1 config=$2 work=$3 mpiexec=$4 flags=${5//;/ }
mkdir -p "$work"; rm -rf "${work:?}"/*
cd "$work"

/usr/bin/python3 - "$config" run.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["data"].update({"samples": 256, "validation_samples": 32})
c["training"].update({"epochs": 40, "log_every": 1,
                      "ltfb": {"trainers": 2, "round_steps": 2, "tournament_samples": 16}})
json.dump(c, open(sys.argv[2], "w"))
PY
common=(train run.json --no-progress --kokkos-threads=1 --kokkos-disable-warnings)
# shellcheck disable=SC2086
launch=("$mpiexec" -n 2 $flags "$tessera")

"${launch[@]}" "${common[@]}" --checkpoint run.ckpt --metrics run.jsonl >run.out 2>run.err &
pid=$!
for _ in $(seq 1 3000); do
  if [[ -f run.jsonl ]] && (( $(grep -c '"event":"tournament"' run.jsonl || true) >= 1 )); then break; fi
  kill -0 "$pid" 2>/dev/null || { echo "the run ended early"; cat run.out run.err; exit 1; }
  sleep 0.01
done
target=$(pgrep -P "$pid" -f 'tessera' | tail -n1 || true)
[[ -n $target ]] || { echo "no rank process under $mpiexec"; exit 1; }
kill -TERM "$target"
status=0; wait "$pid" || status=$?
cat run.out run.err
[[ $status -eq 143 ]] || { echo "expected exit status 143 (128 + SIGTERM), got $status"; exit 1; }
stopped=$(sed -nE 's/^stopped by SIGTERM after step ([0-9]+).*checkpoint written to run.ckpt$/\1/p' run.out)
[[ -n $stopped ]] || { echo "no stop report naming the checkpoint"; exit 1; }
resume=$(sed -n 's/^resume with: //p' run.out)
leftovers=$(ls -a | grep '\.tmp\.' || true)
[[ -z $leftovers ]] || { echo "temporary files left: $leftovers"; exit 1; }
/usr/bin/python3 - run.ckpt "$stopped" <<'PY'
import json, os, sys
m = json.load(open(sys.argv[1]))
stopped = int(sys.argv[2])
assert m["format"] == "tessera-population" and m["step"] == stopped and m["trainers"] == 2, m
for member in m["members"]:
    assert member["file"] == "run.ckpt.step%d.trainer%d" % (stopped, m["members"].index(member)), member
    with open(member["file"], "rb") as f:
        assert f.read(8) == b"TSRACKPT"
print("manifest at step", stopped, "names", [x["file"] for x in m["members"]])
PY

until=$((stopped + 4))
# shellcheck disable=SC2086
eval "$mpiexec -n 2 $flags $resume --max-steps $until" >resume.out 2>&1 || { cat resume.out; exit 1; }
"${launch[@]}" "${common[@]}" --max-steps "$until" --metrics whole.jsonl --quiet >whole.out 2>&1 || { cat whole.out; exit 1; }
/usr/bin/python3 - run.jsonl "run.from-step-$stopped.jsonl" whole.jsonl "$stopped" "$until" <<'PY'
import json, sys
def events(path):
    return [e for e in map(json.loads, open(path))]
def losses(ev):
    return {e["step"]: e["loss"] for e in ev if e["event"] == "train"}
def rounds(ev):
    return {e["round"]: (e["pairs"], e["metrics"]) for e in ev if e["event"] == "tournament"}
before, after, whole = events(sys.argv[1]), events(sys.argv[2]), events(sys.argv[3])
stopped, until = int(sys.argv[4]), int(sys.argv[5])
lb, la, lw = losses(before), losses(after), losses(whole)
for step in range(1, until + 1):
    mine = lb[step] if step <= stopped else la[step]
    assert abs(mine - lw[step]) <= 1e-6 * abs(lw[step]), (step, mine, lw[step])
rb, ra, rw = rounds(before), rounds(after), rounds(whole)
assert sorted(rw) == list(range(1, until // 2 + 1)), sorted(rw)
for r, record in rw.items():
    assert (rb.get(r) or ra.get(r)) == record, (r, rb.get(r), ra.get(r), record)
print("stopped after %d, resumed to %d: losses and tournaments equal the uninterrupted run's" % (stopped, until))
PY
