#!/usr/bin/env bash
# Usage: check_calibrate.sh TESSERA WORKDIR MPIEXEC MPIFLAGS — `tessera calibrate --quick` on 2
# ranks writes a measured profile with a positive α and β for every collective within the node;
# a recalibration on one rank reads it back (the command's own strict reader refuses anything
# that is not a profile) and keeps its layer times; an unwritable --output ends every rank with
# a non-zero exit and a message naming it.
set -euo pipefail
tessera=$1 work=$2 mpiexec=$3 flags=${4//;/ }
rm -rf "$work"; mkdir -p "$work"; cd "$work"
# shellcheck disable=SC2086
"$mpiexec" -n 2 $flags "$tessera" calibrate --quick --output machine.json --name ci --kokkos-disable-warnings 2>&1 \
  | tee calibrate.log
grep -q "collective .*alpha (us)" calibrate.log || { echo "no summary table"; exit 1; }
python3 - <<'PY'
import json, math
p = json.load(open("machine.json"))
assert p["format_version"] == 1 and p["origin"] == "measured" and p["name"] == "ci", p
assert p["ranks_per_node"] >= 2 and p["threads_per_rank"] == 1, p
for key in ("peak_flops_per_rank", "memory_bandwidth_per_rank", "memory_per_rank", "process_baseline"):
    assert math.isfinite(p[key]) and p[key] > 0, (key, p[key])
expected = {"point_to_point", "allreduce", "allgather", "alltoall", "reduce_scatter"}
assert set(p["within_node"]) == expected, p["within_node"]
# The fit is non-negative least squares. Under ctest -j2 on 2 cores another test shares the
# cores, and a latency can then fit as 0 (calibrate warns) or as milliseconds: the bounds are
# what any machine gives, busy or not, and a fit that resolved nothing fails.
for name, cost in p["within_node"].items():
    assert cost["alpha_s"] >= 0 and cost["beta_s_per_byte"] >= 0, (name, cost)
    assert cost["alpha_s"] + cost["beta_s_per_byte"] > 0, (name, cost)
    assert cost["alpha_s"] < 0.1 and cost["beta_s_per_byte"] < 1e-6, (name, cost)
assert p["across_nodes"] == {}, "one node: nothing measured across nodes"
p["layer_times"] = {"conv1 [1,8,8,8,4]": {"forward_s": 0.001, "backward_s": 0.002}}
json.dump(p, open("machine.json", "w"), indent=2)
PY
"$tessera" calibrate --quick --output machine.json --name ci --kokkos-disable-warnings >recalibrate.log
grep -q "kept the 1 measured layer time" recalibrate.log || { cat recalibrate.log; exit 1; }
python3 -c 'import json; p = json.load(open("machine.json")); assert p["layer_times"]["conv1 [1,8,8,8,4]"]["backward_s"] == 0.002, p'
test -z "$(find . -name '*.tmp*')"  # nothing half-written left behind
# Every rank exits non-zero (none is left waiting, none succeeds) and the message names the file.
# shellcheck disable=SC2016,SC2086
out=$("$mpiexec" -n 2 $flags bash -c '"$0" calibrate --quick --output "$1" --kokkos-disable-warnings; echo "rank exit $?"' \
  "$tessera" "$work/no-such-dir/machine.json" 2>&1 || true)
grep -q "no-such-dir.*cannot write --output" <<<"$out" || { echo "$out"; exit 1; }
[[ $(grep -c "rank exit 1" <<<"$out") -eq 2 ]] || { echo "expected both ranks to exit 1:"; echo "$out"; exit 1; }
echo "calibrate: a 2-rank profile with every collective, read back with its layer times kept; bad --output refused on both ranks"
