#!/usr/bin/env bash
# Usage: check_rank_killed.sh CLUSTER_SH TESSERA CONFIG
# Trains on 4 ranks over 2 emulated nodes, kills one rank on the second node with SIGKILL once
# training runs, and checks that the whole job ends (no hang) with a non-zero exit, a message
# naming the killed rank, and no rank left on either node.
set -uo pipefail
cluster=$1 tessera=$2 config=$3
name="k$(printf '%05d' $(($$ % 100000)))"
log=$(mktemp)
trap '"$cluster" down --name "$name" >/dev/null 2>&1; rm -f "$log"' EXIT
"$cluster" up 2 --name "$name" || exit 1
"$cluster" run --name "$name" -- -np 4 --map-by ppr:2:node -x OMP_NUM_THREADS -x OMP_PROC_BIND \
  "$tessera" train "$config" --epochs 1000 --no-progress >"$log" 2>&1 &
job=$!
victim=""
for _ in $(seq 300); do
  if grep -q "^placement:" "$log"; then
    victim=$(ip netns pids "ts$name-n1" 2>/dev/null | while read -r pid; do
      [[ $(cat "/proc/$pid/comm" 2>/dev/null) == tessera ]] && echo "$pid"
    done | head -n1)
    [[ -n $victim ]] && break
  fi
  sleep 0.1
done
if [[ -z $victim ]]; then echo "training never started on node 1:"; cat "$log"; kill "$job"; exit 1; fi
sleep 0.5
kill -9 "$victim"
echo "killed rank process $victim on node 1"
status=0
for _ in $(seq 600); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$job" 2>/dev/null; then echo "the job still runs 60 s after a rank was killed (a hang):"; tail -n 20 "$log"; exit 1; fi
wait "$job" || status=$?
tail -n 8 "$log"
((status != 0)) || { echo "the job exited 0 after a rank was killed"; exit 1; }
grep -Eq "exited on signal 9|killed" "$log" || { echo "no message names the killed rank"; exit 1; }
# mpirun can return before the daemon on node 1 has finished ending its ranks: Open MPI sends
# SIGTERM, on which a rank tries to finish its step (blocked on the dead peer), and SIGKILL
# odls_base_sigkill_timeout (1 s) later. So the ranks get a few seconds to go, not forever.
ranks_left() {
  ip netns pids "ts$name-n$1" 2>/dev/null | while read -r pid; do cat "/proc/$pid/comm" 2>/dev/null; done | grep -c tessera
}
for node in 0 1; do
  for _ in $(seq 150); do (($(ranks_left $node) == 0)) && break; sleep 0.1; done
  left=$(ranks_left $node)
  ((left == 0)) || { echo "$left tessera rank(s) still run on node $node 15 s after mpirun ended"; exit 1; }
done
echo "exit $status; every rank ended"
