#!/usr/bin/env bash
# Usage: check_signal_stop.sh MODE TESSERA CONFIG WORKDIR [MPIEXEC MPIFLAGS]
#   MODE stop:   SIGTERM to a training run: it finishes its step, writes its checkpoint, exits 143
#                naming the resume command, leaves no temporary file, and that command continues
#                with the losses of an uninterrupted run.
#   MODE mpi:    the same on 2 ranks under MPIEXEC, the signal sent to one rank's process only.
#   MODE twice:  two SIGINTs: the second ends the run at once (exit 130), no temporary file left.
set -euo pipefail
mode=$1 tessera=$2 config=$3 work=$4 mpiexec=${5:-} flags=${6:-}
flags=${flags//;/ }
mkdir -p "$work"; rm -rf "${work:?}"/*
cd "$work"

# The example with a logged loss every step, fewer samples (quick to prepare) and more epochs
# than the test waits for.
/usr/bin/python3 - "$config" run.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["data"].update({"samples": 256, "validation_samples": 32})
c["training"].update({"epochs": 40, "log_every": 1})
json.dump(c, open(sys.argv[2], "w"))
PY

launch=("$tessera")
if [[ $mode == mpi ]]; then
  # shellcheck disable=SC2206
  launch=("$mpiexec" -n 2 $flags "$tessera")
fi
common=(train run.json --no-progress --kokkos-threads=1 --kokkos-disable-warnings)
# Two SIGINTs must both arrive before the step under way ends: longer steps.
[[ $mode == twice ]] && common+=(--batch-size 64)

# Polls (no fixed sleeps) until the metrics log holds N "train" records.
wait_for_steps() {
  local n=$1 pid=$2
  for _ in $(seq 1 3000); do
    if [[ -f run.jsonl ]] && (( $(grep -c '"event":"train"' run.jsonl || true) >= n )); then return 0; fi
    kill -0 "$pid" 2>/dev/null || { echo "the run ended before it took $n steps"; cat run.out; exit 1; }
    sleep 0.01
  done
  echo "no $n steps logged in 30 s"; exit 1
}

"${launch[@]}" "${common[@]}" --checkpoint run.ckpt --metrics run.jsonl >run.out 2>run.err &
pid=$!
if [[ $mode == twice ]]; then
  # Right after a step's record, so both signals arrive early in the next step.
  wait_for_steps 1 "$pid"
  kill -INT "$pid"
  # Signals of one kind do not queue: send the second once the first has been taken (no
  # SIGINT pending), checked with shell builtins to lose no time.
  for _ in $(seq 1 1000); do
    taken=1
    while read -r key value; do
      [[ $key == SigPnd: || $key == ShdPnd: ]] && (( (16#$value >> (2 - 1)) & 1 )) && taken=0
    done <"/proc/$pid/status" || true
    (( taken )) && break
  done
  kill -INT "$pid" 2>/dev/null || true
  status=0; wait "$pid" || status=$?
  cat run.out run.err
  [[ $status -eq 130 ]] || { echo "expected exit status 130 (128 + SIGINT), got $status"; exit 1; }
  grep -q 'SIGINT: stopping at once' run.err || { echo "the second SIGINT did not end the run at once"; exit 1; }
  leftovers=$(ls -a | grep '\.tmp\.' || true)
  [[ -z $leftovers ]] || { echo "temporary files left: $leftovers"; exit 1; }
  # Every line of the metrics log is whole.
  /usr/bin/python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' run.jsonl
  echo "second SIGINT: exit $status at once, no temporary files, metrics log whole"
  exit 0
fi

wait_for_steps 2 "$pid"

if [[ $mode == mpi ]]; then
  # One rank's process only: the other learns of it in the step's collective.
  ranks=$(pgrep -P "$pid" -f 'tessera' || true)
  target=$(tail -n1 <<<"$ranks")
  [[ -n $target ]] || { echo "no rank process under $mpiexec"; exit 1; }
  echo "ranks: $(echo "$ranks" | tr '\n' ' ')- SIGTERM to $target only"
  kill -TERM "$target"
else
  kill -TERM "$pid"
fi
status=0; wait "$pid" || status=$?
cat run.out run.err
[[ $status -eq 143 ]] || { echo "expected exit status 143 (128 + SIGTERM), got $status"; exit 1; }
grep -Eq '^stopped by SIGTERM after step [0-9]+ \(exit status 143\); checkpoint written to run.ckpt$' run.out
test "$(grep -c '^stopped by SIGTERM' run.out)" -eq 1  # rank 0 alone reports
stopped=$(sed -nE 's/^stopped by SIGTERM after step ([0-9]+).*/\1/p' run.out)
resume=$(sed -n 's/^resume with: //p' run.out)
[[ -n $resume ]] || { echo "no resume command printed"; exit 1; }
leftovers=$(ls -a | grep '\.tmp\.' || true)
[[ -z $leftovers ]] || { echo "temporary files left: $leftovers"; exit 1; }

# The checkpoint is complete (its header parses, its payload has the header's size) and holds
# the step the run reported; the log ends with the stop.
/usr/bin/python3 - run.ckpt run.jsonl "$stopped" <<'PY'
import json, os, struct, sys
path, log, stopped = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path, "rb") as f:
    assert f.read(8) == b"TSRACKPT", "bad magic"
    (length,) = struct.unpack("<Q", f.read(8))
    header = json.loads(f.read(length))
count = 0
for t in header["tensors"]:
    n = 1
    for d in t["shape"]:
        n *= d
    count += n
assert os.path.getsize(path) == 16 + length + 4 * count, "checkpoint size does not match its header"
assert header["step"] == stopped, (header["step"], stopped)
events = [json.loads(l) for l in open(log)]
assert events[-1]["event"] == "end" and events[-1]["stopped_by"] == "SIGTERM", events[-1]
assert [e["step"] for e in events if e["event"] == "train"] == list(range(1, stopped + 1))
print("checkpoint at step", stopped, "complete;", len(events), "whole metrics records")
PY

# The printed command, a few steps further, against one uninterrupted run to the same step.
until=$((stopped + 3))
if [[ $mode == mpi ]]; then
  grep -q '^  under the MPI launcher, on 2 ranks as this run was$' run.out
  # shellcheck disable=SC2086
  resume="$mpiexec -n 2 $flags $resume"
fi
eval "$resume --max-steps $until" >resume.out 2>&1 || { cat resume.out; exit 1; }
grep -q "^done: $until steps" resume.out || { cat resume.out; exit 1; }
"${launch[@]}" "${common[@]}" --max-steps "$until" --metrics whole.jsonl --quiet >whole.out 2>&1 || { cat whole.out; exit 1; }
/usr/bin/python3 - run.jsonl "run.from-step-$stopped.jsonl" whole.jsonl "$stopped" "$until" <<'PY'
import json, sys
def losses(path):
    return {e["step"]: e["loss"] for e in map(json.loads, open(path)) if e["event"] == "train"}
before, after, whole = losses(sys.argv[1]), losses(sys.argv[2]), losses(sys.argv[3])
stopped, until = int(sys.argv[4]), int(sys.argv[5])
assert sorted(after) == list(range(stopped + 1, until + 1)), sorted(after)
for step in range(1, until + 1):
    mine = before[step] if step <= stopped else after[step]
    assert abs(mine - whole[step]) <= 1e-6 * abs(whole[step]), (step, mine, whole[step])
print("losses of steps 1-%d (stopped after %d, resumed) equal the uninterrupted run's" % (until, stopped))
# Validation uses batch norm's running statistics: on several ranks they must be the same on
# every replica, or the checkpoint (rank 0's) would resume another model than the one that ran.
def validations(path):
    return {e["step"]: e["loss"] for e in map(json.loads, open(path)) if e["event"] == "validation"}
resumed, uninterrupted = validations(sys.argv[2]), validations(sys.argv[3])
common = sorted(set(resumed) & set(uninterrupted))
assert common, ("no validation at a common step", sorted(resumed), sorted(uninterrupted))
for step in common:
    assert abs(resumed[step] - uninterrupted[step]) <= 1e-6 * abs(uninterrupted[step]), (step, resumed[step], uninterrupted[step])
print("validation losses at steps %s equal the uninterrupted run's" % common)
PY
