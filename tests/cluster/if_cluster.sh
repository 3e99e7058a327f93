#!/usr/bin/env bash
# Usage: if_cluster.sh COMMAND...  — runs COMMAND where scripts/cluster.sh can make an emulated
# cluster (root, network and UTS namespaces); elsewhere prints TESSERA-SKIPPED with the reason
# (the marker scripts/report_skips.py reads) and exits 77,
# which CTest reports as skipped (SKIP_RETURN_CODE). With "cluster" in TESSERA_REQUIRE a skip
# is a failure instead, as for the C++ tests (tests/support/skip.hpp).
here=$(cd "$(dirname "$0")" && pwd)
if ! reason=$("$here/../../scripts/cluster.sh" check); then
  echo "TESSERA-SKIPPED: no emulated cluster here: ${reason#no emulated cluster here: }"
  [[ ,${TESSERA_REQUIRE:-}, == *,cluster,* ]] && { echo "TESSERA_REQUIRE has cluster: failing instead"; exit 1; }
  exit 77
fi
exec "$@"
