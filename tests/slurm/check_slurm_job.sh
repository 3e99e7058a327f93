#!/usr/bin/env bash
# Usage: check_slurm_job.sh MODE TESSERA WORKDIR — batch jobs on a real Slurm over emulated nodes
# (scripts/slurm_cluster.sh), submitted with the scripts of examples/slurm as a user would:
#   same-as-mpirun  a 2-node sbatch job ends with the weights an mpirun run of the layout gives;
#                   a task with more threads than SLURM_CPUS_PER_TASK is warned about
#   preempt         the job is signalled mid-run (scancel --signal=TERM, as a pre-emption or a
#                   time limit's --signal does), checkpoints, requeues itself, resumes, and ends
#                   bit-identical to an uninterrupted run
#   lost-node       node 1 dies mid-run (all its processes killed); the job ends on every rank,
#                   Slurm requeues it, it resumes on the remaining node with 1 rank instead of 2
#                   and ends with a loss within float noise of the uninterrupted run
#   array           a job array of 3 runs, each with its own output, log and checkpoint
#   examples        the other scripts of examples/slurm (U-Net spatial and hybrid, an LTFB
#                   population) run a few steps on 2 nodes of 2 CPUs
# Prints the figures the issue asks for (time lost, steps repeated). Exits 77 (skipped) with the
# reason where Slurm or the emulated cluster cannot run.
set -euo pipefail
mode=$1 tessera=$(readlink -f "$2") work=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
slurm="$root/scripts/slurm_cluster.sh"
config="$root/tests/slurm/cosmoflow_tiny_sync_bn.json"

if ! reason=$("$slurm" check); then
  echo "TESSERA-SKIPPED: ${reason}"
  [[ ,${TESSERA_REQUIRE:-}, == *,slurm,* ]] && { echo "TESSERA_REQUIRE has slurm: failing instead"; exit 1; }
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
work=$(readlink -f "$work")
name="j$(printf '%05d' $(($$ % 100000)))"
export TESSERA_SLURM_LOGS="$work/slurm-logs"
trap '"$slurm" down --name "$name" >/dev/null 2>&1 || true' EXIT
# 2 CPUs a node for the scripts with 2 tasks a node (the nodes then share the machine's CPUs).
cpus=1
[[ $mode == examples ]] && cpus=2
"$slurm" up 2 --name "$name" --kill-wait 20 --cpus-per-node "$cpus"

fail() { echo "FAIL: $*" >&2; tail -n 40 "$work"/*.out >&2 2>/dev/null || true; exit 1; }
sx() { "$slurm" exec --name "$name" -- "$@"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
# sbatch SCRIPT [sbatch options]: submits from WORK with the test's tessera and config; prints the job id.
submit() { CONFIG=$config submit_with_config "$@"; }
submit_with_config() {
  local script=$1
  shift
  sx env TESSERA="$tessera" CONFIG="$CONFIG" TRAIN_ARGS="${TRAIN_ARGS:-}" CHECKPOINT_EVERY="${CHECKPOINT_EVERY:-50}" \
    sbatch --parsable --chdir="$work" --output="$work/%x-%j.out" "$@" "$root/examples/slurm/$script"
}
job_field() { sx scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
# Waits until job ID has ended (COMPLETED, FAILED, ...). A requeued job is held for the
# cluster's credential lifetime (10 s, slurm_cluster.sh) before it may start again; moving its
# start up makes the relaunch fail ("Job credential revoked").
wait_for_end() {
  local id=$1 limit=$2 t=0 state
  while ((t < limit)); do
    state=$(job_field "$id" JobState)
    case $state in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) echo "$state"; return 0 ;;
    esac
    sleep 1
    t=$((t + 1))
  done
  fail "job $id still $state after ${limit}s"
}
# Waits until Slurm has requeued job ID: its restart count is 1 or more and it is queued, running
# or done, so that a job that ended without a requeue is named as such.
wait_for_requeue() {
  local id=$1 limit=$2 t=0 restarts
  while ((t < limit)); do
    restarts=$(job_field "$id" Restarts || true)
    ((${restarts:-0} >= 1)) && [[ $(job_field "$id" JobState) =~ ^(PENDING|CONFIGURING|RUNNING|COMPLETING|COMPLETED)$ ]] &&
      return 0
    sleep 0.5
    t=$((t + 1))
  done
  fail "job $id was not requeued within $((limit / 2))s (state $(job_field "$id" JobState))"
}
# Waits until the metrics log LOG has a training record at step STEP or later.
wait_for_step() {
  local log=$1 step=$2 t=0
  while ((t < 600)); do
    if [[ -f $log ]] && /usr/bin/python3 - "$log" "$step" <<'PY'; then return 0; fi
import json, sys
steps = [r.get("step", 0) for r in map(json.loads, filter(str.strip, open(sys.argv[1]))) if r.get("event") == "train"]
sys.exit(0 if steps and max(steps) >= int(sys.argv[2]) else 1)
PY
    sleep 0.2
    t=$((t + 1))
  done
  fail "$log never reached step $step"
}
# The last training record's loss of a metrics log.
last_loss() {
  /usr/bin/python3 -c 'import json,sys; print([r for r in map(json.loads, filter(str.strip, open(sys.argv[1]))) if r.get("event") == "train"][-1]["loss"])' "$1"
}
# An uninterrupted 2-node run of the same layout with mpirun (one rank per node), for reference.
reference() {
  OMP_NUM_THREADS=1 OMP_PROC_BIND=false "$root/scripts/cluster.sh" run --name "$name" -- -np 2 --map-by node \
    -x OMP_NUM_THREADS -x OMP_PROC_BIND "$tessera" train "$config" --no-progress --quiet $TRAIN_ARGS \
    --checkpoint "$work/reference.ckpt" --metrics "$work/reference.jsonl" >"$work/reference.out" 2>&1 ||
    fail "the mpirun reference run failed: $(tail -3 "$work/reference.out")"
}

case $mode in
  same-as-mpirun)
    TRAIN_ARGS="--max-steps 40 --epochs 1"
    reference
    id=$(submit cosmoflow_data_parallel.sbatch)
    [[ $(wait_for_end "$id" 120) == COMPLETED ]] || fail "job $id did not complete"
    out="$work/cosmoflow-dp-$id.out"
    grep -q "slurm job $id.0, 2 node(s) ts$name-node\[0-1\], tasks per node 1(x2)" "$out" || fail "the run header does not name the job"
    /usr/bin/python3 - "$work/runs/cosmoflow-dp-$id.jsonl" "$id" <<'PY' || fail "the metrics log's start record does not name the job"
import json, sys
start = json.loads(open(sys.argv[1]).readline())
job = start["job"]
assert job["scheduler"] == "slurm" and job["job_id"] == sys.argv[2] and job["node_count"] == 2, job
PY
    cmp "$work/reference.ckpt" "$work/runs/cosmoflow-dp-$id.ckpt" || fail "sbatch and mpirun weights differ"
    # More threads than the CPUs the job gave each task: a warning naming both.
    sx srun -N 1 -n 1 --cpus-per-task=1 --mpi=pmix --chdir="$work" env OMP_NUM_THREADS=2 "$tessera" train "$config" \
      --max-steps 1 --quiet >"$work/threads.out" 2>&1 || fail "the 1-step srun failed: $(tail -3 "$work/threads.out")"
    grep -q "Slurm gave each task 1 CPU(s) (SLURM_CPUS_PER_TASK) but this run uses 2 thread(s)" "$work/threads.out" ||
      fail "no warning about 2 threads on 1 CPU per task"
    echo "sbatch job $id on 2 nodes: weights identical to mpirun's; a thread count above SLURM_CPUS_PER_TASK is warned about"
    ;;
  preempt)
    TRAIN_ARGS="--max-steps 600 --epochs 10"
    reference
    id=$(submit cosmoflow_data_parallel.sbatch)
    wait_for_step "$work/runs/cosmoflow-dp-$id.jsonl" 160
    signalled=$(now)
    sx scancel --signal=TERM "$id"
    wait_for_requeue "$id" 120
    state=$(wait_for_end "$id" 300)
    [[ $state == COMPLETED ]] || fail "job $id ended $state after its requeue, not COMPLETED"
    out="$work/cosmoflow-dp-$id.out"
    stop=$(sed -n 's/^stopped by SIGTERM after step \([0-9]*\).*/\1/p' "$out" | head -1)
    resumed=$(sed -n 's/^resumed from .* at step \([0-9]*\)$/\1/p' "$out" | head -1)
    [[ -n $stop && -n $resumed ]] || fail "no stop and resume in $out"
    grep -q "requeueing job $id" "$out" || fail "the script did not requeue the job"
    [[ $(job_field "$id" Restarts) == 1 ]] || fail "Slurm counts $(job_field "$id" Restarts) restarts, not 1"
    restart=$(date -d "$(sed -n 's/^start \(.*\): job .*, restart 1,.*/\1/p' "$out")" +%s)
    cmp "$work/reference.ckpt" "$work/runs/cosmoflow-dp-$id.ckpt" || fail "the resumed job's weights differ from the uninterrupted run's"
    echo "pre-emption: SIGTERM at step $stop, resumed at step $resumed ($((stop - resumed)) steps repeated), requeued job started $(elapsed "$signalled" "$restart") s after the signal (Slurm's hold of a requeued job: 10 s here); final weights bit-identical to the uninterrupted run"
    ;;
  lost-node)
    TRAIN_ARGS="--max-steps 300 --epochs 5"
    reference
    # 1 to 2 nodes: the job starts on both, and after the loss it may run on the one left.
    id=$(submit cosmoflow_data_parallel.sbatch --nodes=1-2)
    wait_for_step "$work/runs/cosmoflow-dp-$id.jsonl" 112
    lost=$(now)
    "$slurm" lose --name "$name" 1
    wait_for_requeue "$id" 180
    state=$(wait_for_end "$id" 300)
    [[ $state == COMPLETED ]] || fail "job $id ended $state after the node loss, not COMPLETED"
    out="$work/cosmoflow-dp-$id.out"
    grep -q "DUE TO NODE FAILURE" "$out" || fail "the surviving rank's step did not end with Slurm's node-failure message"
    grep -q "slurm job $id.0, requeued 1 time, 1 node(s) ts$name-node0" "$out" || fail "the requeued job did not run on the remaining node"
    resumed=$(sed -n 's/^resumed from .* at step \([0-9]*\)$/\1/p' "$out" | head -1)
    before=$(/usr/bin/python3 -c 'import json,sys; print(max(r["step"] for r in map(json.loads, filter(str.strip, open(sys.argv[1]))) if r.get("event") == "train"))' "$work/runs/cosmoflow-dp-$id.jsonl")
    restart=$(date -d "$(sed -n 's/^start \(.*\): job .*, restart 1,.*/\1/p' "$out")" +%s)
    ours=$(last_loss "$work/runs/cosmoflow-dp-$id.from-step-$resumed.jsonl")
    theirs=$(last_loss "$work/reference.jsonl")
    # 1 rank instead of 2 sums the same gradients in another order; over 300 steps of Adam the
    # loss curves of 1 and 2 uninterrupted ranks of this model drifted apart by 0.6% (384 steps).
    awk -v a="$ours" -v b="$theirs" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.02 * b) }' ||
      fail "final loss $ours is not within 2% of the uninterrupted run's $theirs"
    echo "lost node: node 1 lost after logged step $before, resumed at step $resumed on 1 node (at most $((before + 16 - resumed)) steps repeated), requeued job started $(elapsed "$lost" "$restart") s after the loss (10 s hold included); final loss $ours against $theirs uninterrupted"
    ;;
  array)
    TRAIN_ARGS="--max-steps 12 --epochs 1"
    id=$(sx env TESSERA="$tessera" CONFIG="$config" TRAIN_ARGS="$TRAIN_ARGS" CHECKPOINT_EVERY=4 BATCH_SIZES="4 8 16" \
      sbatch --parsable --chdir="$work" --output="$work/%x-%A_%a.out" "$root/examples/slurm/batch_size_sweep.sbatch")
    for task in 0 1 2; do
      [[ $(wait_for_end "${id}_$task" 180) == COMPLETED ]] || fail "array task ${id}_$task did not complete"
    done
    for task in 0 1 2; do
      run="$work/runs/sweep-${id}_$task"
      test -f "$run.ckpt" && test -f "$run.jsonl" && test -f "$work/sweep-${id}_$task.out" || fail "task $task lacks its files"
      batch=$(echo 4 8 16 | cut -d' ' -f$((task + 1)))
      /usr/bin/python3 - "$run.jsonl" "$id" "$task" "$batch" <<'PY' || fail "task $task's log is not its own"
import json, sys
start = json.loads(open(sys.argv[1]).readline())
assert start["batch_size"] == int(sys.argv[4]), start["batch_size"]
assert start["job"]["array"] == {"job_id": sys.argv[2], "task_id": sys.argv[3]}, start["job"]
PY
    done
    echo "job array $id: 3 tasks, each with its own output, metrics log and checkpoint"
    ;;
  examples)
    (cd "$work" && "$tessera" datagen cells --output runs/cells32 --size 32 --samples 8 --validation-samples 4 >/dev/null)
    ids=()
    for script_config in unet3d_spatial.sbatch:examples/unet3d/unet3d_cells_spatial.json \
      unet3d_hybrid.sbatch:examples/unet3d/unet3d_cells_data_parallel.json ltfb_population.sbatch:examples/cosmoflow_tiny.json; do
      ids+=("$(CONFIG="$root/${script_config#*:}" TRAIN_ARGS="--max-steps 3" submit_with_config "${script_config%%:*}")")
    done
    for id in "${ids[@]}"; do
      [[ $(wait_for_end "$id" 180) == COMPLETED ]] || fail "job $id did not complete"
    done
    grep -q "^done: 3 steps" "$work"/unet3d-spatial-*.out || fail "the spatial U-Net job did not train"
    grep -q "^done: 3 steps" "$work"/unet3d-hybrid-*.out || fail "the hybrid U-Net job did not train"
    grep -q "^trainer 0: done: 3 steps" "$work"/ltfb-*.out || fail "the LTFB job did not train"
    echo "examples/slurm: the U-Net spatial and hybrid jobs and the LTFB population ran"
    ;;
  *) echo "unknown mode '$mode'" >&2; exit 2 ;;
esac
