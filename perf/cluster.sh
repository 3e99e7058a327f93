#!/usr/bin/env bash
# The network-bound regime on an emulated cluster of 2 nodes (scripts/cluster.sh, as root):
# links whose bandwidth gives this machine the FLOP/s per byte of link of a real machine
# (--target; perf/cluster.py says how), then halo overlap on the small-block model, the
# gradient all-reduce hidden behind backprop, and the seeds' hybrid (model parallel inside a
# node, data parallel across nodes) against data parallelism, and the planner's time error and
# regret (perf/plan_accuracy.py --quick, calibrated on the cluster). perf/cluster.py defines
# each figure.
# Usage: perf/cluster.sh [--target perlmutter-tf32|sierra|sierra-fp16|theta] [--runs R] [--steps N]
#                        [--parts halo,data,hybrid,plan,cube] [--data-batch B] [--keep DIR] [--build DIR | --tessera PATH]
# Last line: target=… link_mbit=… halo_fraction=… hidden_fraction=… overlap_speedup=…
#            overlap_speedup_min=… allreduce_hidden=… hybrid_vs_data=… hybrid_network_bytes_ratio=…
#            plan_time_error=… plan_regret=…
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/perf tessera="" keep="" args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --target|--runs|--steps|--parts|--data-batch) args+=("$1" "$2"); shift ;;
    --keep) keep=$2; shift ;;
    --build) build=$2; shift ;;
    --tessera) tessera=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cluster.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
source perf/common.sh
cluster_runs cluster.sh
/usr/bin/python3 perf/cluster.py "$tessera" "$work" "${args[@]}"
