#!/usr/bin/env bash
# `tessera report` as a person sees it: trains the built-in example twice (two seeds, with
# --profile) and a population of two trainers on 2 ranks, writes a report of each, renders
# the pages in headless Chromium and checks what it laid out (scripts/check_report_page.py):
# the sections, every plot's axes and series, and the runs' series by name. A copy of the
# page with its series removed must fail the same check. Screenshots are left in WORKDIR.
# Without chromium the case skips, unless TESSERA_REQUIRE names chromium (scripts/test.sh
# installs it), where it fails.
# Usage: check_report_in_browser.sh TESSERA MPIEXEC WORKDIR
set -euo pipefail
tessera=$1 mpiexec=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
check="python3 $root/scripts/check_report_page.py"
if ! command -v chromium >/dev/null; then
  if [[ ,${TESSERA_REQUIRE:-}, == *,chromium,* ]]; then
    echo "FAIL: no chromium, and TESSERA_REQUIRE names it (Debian: apt-get install chromium)"
    exit 1
  fi
  echo "TESSERA-SKIPPED: no chromium to render the report in (Debian: apt-get install chromium)"
  exit 0
fi
rm -rf "$work" && mkdir -p "$work"
cd "$work"
example=$root/examples/cosmoflow_tiny.json
"$tessera" train "$example" --epochs 2 --profile --no-progress --metrics seed42.jsonl >/dev/null
"$tessera" train "$example" --epochs 2 --seed 7 --no-progress --metrics seed7.jsonl >/dev/null
"$mpiexec" -n 2 "$tessera" train "$example" --epochs 2 --trainers 2 --no-progress --metrics population.jsonl >/dev/null

"$tessera" report seed42.jsonl seed7.jsonl -o seeds.html
$check seeds.html --sections runs,loss,metrics,speed,profile,layout,placement,setup --min-plots 5 \
  --series seed42 --series seed7 --series "seed42 validation" --screenshot seeds.png
# A run with a long name: its legend labels wrap instead of running off the picture.
cp seed7.jsonl cosmoflow_tiny_learning_rate_sweep_lr0.002_seed7_second_attempt.jsonl
"$tessera" report seed42.jsonl cosmoflow_tiny_learning_rate_sweep_lr0.002_seed7_second_attempt.jsonl -o long.html
$check long.html --min-plots 5 --series "cosmoflow_tiny_learning_rate_sweep_lr0.002_seed7_second_attempt validation"
"$tessera" report population.jsonl
$check population.html --sections runs,loss,metrics,layout,placement,population --min-plots 4 \
  --series "population trainer 0" --series "population trainer 1" --screenshot population.png
grep -q "population.jsonl" population.html

# The check can fail: the same page without its series.
sed -E 's#<g class="series"[^>]*>.*</g>##' seeds.html >no_series.html
if $check no_series.html --min-plots 5 >no_series.out; then
  echo "FAIL: a page whose plots have no series passed the check"
  exit 1
fi
grep -q "no series shows" no_series.out
# ... and a legend label cut at the edge (the wrapped lines joined into one), and plots drawn
# at their own size in a wider page.
sed -E 's#</tspan><tspan x="[0-9.]+" dy="13">#_#g' long.html >cut_legend.html
if $check cut_legend.html --min-plots 5 >cut_legend.out; then
  echo "FAIL: a page with a legend label past the picture's edge passed the check"
  exit 1
fi
grep -q "is cut at the right edge" cut_legend.out
sed 's#width:100%;height:auto##' seeds.html >narrow.html
if $check narrow.html --min-plots 5 >narrow.out; then
  echo "FAIL: a page whose plots keep their own width passed the check"
  exit 1
fi
grep -q "px wide where the page has" narrow.out
echo "report pages render with their sections, axes and series"
