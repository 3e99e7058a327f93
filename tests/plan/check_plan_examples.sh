#!/usr/bin/env bash
# Usage: check_plan_examples.sh TESSERA SOURCE_DIR WORKDIR — `tessera plan` on every example run
# config under examples/, on the published Theta profile (priced by its roofline, so nothing is
# measured and the check is quick): at 2 ranks each must plan (exit 0, or 3 where nothing fits);
# at the ranks its own distribution names, `--given` must predict that layout; at 8 ranks each
# must plan or say clearly why no layout of 8 ranks can run it. The examples' configs are the
# ones users start from, so a planner change that breaks one fails here.
set -euo pipefail
tessera=$1 source_dir=$2 work=$3
machine=$source_dir/share/machines/theta.json
rm -rf "$work"; mkdir -p "$work"
failed=0 planned=0
plan() {  # plan NAME CONFIG ARGS... : 0 when the plan ran (exit 0 or 3), else prints why
  local name=$1 config=$2 rc=0
  shift 2
  "$tessera" plan "$config" --machine "$machine" --json "$work/$name.json" "$@" >"$work/$name.log" 2>&1 || rc=$?
  if [[ $rc -ne 0 && $rc -ne 3 ]]; then return 1; fi
  grep -q '"valid": true' "$work/$name.json"
}
while IFS= read -r config; do
  python3 -c 'import json, sys; sys.exit(0 if "model" in json.load(open(sys.argv[1])) else 1)' "$config" || continue
  name=$(basename "$(dirname "$config")")_$(basename "$config" .json)
  if ! plan "$name.2" "$config" --ranks 2; then
    echo "FAIL: $config at 2 ranks:"; cat "$work/$name.2.log"; failed=1
  fi
  ranks=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["model"].get("distribution")
n = 1
for v in (d or {}).values():
    n *= v
print(n)' "$config")
  if [[ $ranks -gt 1 ]] && ! plan "$name.given" "$config" --ranks "$ranks" --given; then
    echo "FAIL: $config, its own layout on $ranks ranks (--given):"; cat "$work/$name.given.log"; failed=1
  fi
  if ! plan "$name.8" "$config" --ranks 8; then
    # No layout of 8 ranks may exist (too few samples and too small maps): then it must say so.
    if ! grep -Eq "runs under no distribution of 8 ranks|no layout of 8 ranks with global batch" "$work/$name.8.log"; then
      echo "FAIL: $config at 8 ranks:"; cat "$work/$name.8.log"; failed=1
    fi
  fi
  planned=$((planned + 1))
done < <(find "$source_dir/examples" -name '*.json' | sort)
[[ $planned -ge 10 ]] || { echo "only $planned example configs found"; exit 1; }
[[ $failed -eq 0 ]] || exit 1
echo "plan: $planned example configs planned at 2 and 8 ranks, stated layouts predicted"
