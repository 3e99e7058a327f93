#!/usr/bin/env bash
# Usage: check_resume_auto.sh TESSERA CONFIG WORKDIR — `train --resume auto`, as a requeued batch
# job runs it: the first start trains from step 0, a restart goes on from the newest checkpoint
# and ends with the weights of an uninterrupted run, a damaged newest checkpoint falls back to
# the one before it (saying so, the damaged file kept aside), and nothing usable is an error.
set -euo pipefail
tessera=$1 config=$2 work=$3
rm -rf "$work"; mkdir -p "$work"
run() { "$tessera" train "$config" --epochs 1 --no-progress --kokkos-threads=2 "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# The reference: 6 steps at once.
run --max-steps 6 --checkpoint "$work/whole.ckpt" --quiet >/dev/null

# The job's first start: no checkpoint yet.
run --max-steps 4 --checkpoint-every 2 --checkpoint "$work/job.ckpt" --metrics "$work/job.jsonl" --resume auto \
  | tee "$work/first.out"
grep -q "no checkpoint at $work/job.ckpt yet: starting from step 0" "$work/first.out" || fail "first start not announced"
test -f "$work/job.ckpt.previous" || fail "the checkpoint before the newest was not kept"

# The requeued job: same command, more steps allowed. It resumes at step 4 and logs beside.
run --max-steps 6 --checkpoint-every 2 --checkpoint "$work/job.ckpt" --metrics "$work/job.jsonl" --resume auto \
  | tee "$work/second.out"
grep -q "resumed from $work/job.ckpt at step 4" "$work/second.out" || fail "did not resume at step 4"
test -f "$work/job.from-step-4.jsonl" || fail "the resumed part's metrics log is missing"
cmp "$work/whole.ckpt" "$work/job.ckpt" || fail "resumed weights differ from the uninterrupted run's"

# A damaged newest checkpoint: the one before it (step 4) is used and the damaged one kept.
truncate -s 100 "$work/job.ckpt"
run --max-steps 6 --checkpoint-every 2 --checkpoint "$work/job.ckpt" --resume auto 2>&1 | tee "$work/third.out"
grep -q "the newest checkpoint is damaged (kept as $work/job.ckpt.damaged); resuming from the one before it, $work/job.ckpt.previous, at step 4" \
  "$work/third.out" || fail "no fallback to the previous checkpoint"
test -f "$work/job.ckpt.damaged" || fail "the damaged checkpoint was not kept aside"
cmp "$work/whole.ckpt" "$work/job.ckpt" || fail "after the fallback the weights differ from the uninterrupted run's"

# Nothing usable: an error naming both files, not a silent fresh start.
truncate -s 100 "$work/job.ckpt" "$work/job.ckpt.previous"
status=0
run --max-steps 6 --checkpoint "$work/job.ckpt" --resume auto >"$work/fourth.out" 2>&1 || status=$?
cat "$work/fourth.out"
((status != 0)) || fail "two damaged checkpoints were not refused"
grep -q "no complete checkpoint to resume from" "$work/fourth.out" || fail "the error does not say why"
grep -q "job.ckpt.previous: " "$work/fourth.out" || fail "the error does not name the previous checkpoint"

# auto needs the run's own checkpoint file.
status=0
run --max-steps 2 --resume auto >"$work/fifth.out" 2>&1 || status=$?
((status != 0)) && grep -q -- "--resume: auto resumes from the run's own checkpoints" "$work/fifth.out" ||
  fail "--resume auto without --checkpoint was not refused by name"
test -z "$(ls "$work" | grep '\.tmp\.' || true)" || fail "temporary files left behind"
echo "resume auto: ok"
