#!/usr/bin/env bash
# Usage: check_calibrate.sh CLUSTER_SH TESSERA DIR
# Calibrates on 4 ranks over 2 emulated nodes whose links are shaped to 200 Mbit/s, and checks
# that the profile holds costs within a node and across nodes apart, says which is which, and that
# the links between nodes measure slower than shared memory. The link is shaped well below what
# shared memory reaches even on a loaded 2-core machine (CI measured 0.59 GB/s within a node
# while other tests ran), so the comparison does not depend on how busy the machine is.
set -euo pipefail
cluster=$1 tessera=$2 dir=$3
mkdir -p "$dir"
rm -f "$dir/machine.json"
"$cluster" with 2 --bandwidth 200mbit -- -np 4 --map-by ppr:2:node -x OMP_NUM_THREADS -x OMP_PROC_BIND \
  "$tessera" calibrate --quick --output "$dir/machine.json" 2>&1 | tee "$dir/calibrate.log"
grep -q "collectives on 2 ranks within one node" "$dir/calibrate.log"
grep -q "collectives on 3 ranks across nodes" "$dir/calibrate.log"
grep -Eq "point_to_point +across nodes" "$dir/calibrate.log"
python3 - "$dir/machine.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["ranks_per_node"] == 2, p["ranks_per_node"]
for where in ("within_node", "across_nodes"):
    assert set(p[where]) >= {"point_to_point", "allreduce", "allgather"}, (where, p[where])
# A beta the timings did not resolve is fitted as 0 (calibrate warns): bandwidth beyond what the
# quick fit's sizes can tell apart, which a busy node gives within itself (seen in a full ctest
# run: 0 within the node, a shaped link across).
bw = {w: 1 / b / 1e9 if b > 0 else float("inf")
      for w, b in ((w, p[w]["point_to_point"]["beta_s_per_byte"]) for w in ("within_node", "across_nodes"))}
print("point-to-point GB/s: within a node %.2f, across nodes %.3f" % (bw["within_node"], bw["across_nodes"]))
# 200 Mbit/s is 0.025 GB/s; the quick fit's three sizes let the token bucket's burst count, so
# allow a margin.
assert 0 < bw["across_nodes"] < 0.1, "links shaped to 200 Mbit/s measured %.3f GB/s" % bw["across_nodes"]
assert bw["within_node"] > 4 * bw["across_nodes"], bw
PY
