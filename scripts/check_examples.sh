#!/usr/bin/env bash
# The newcomer's walk-through, checked: builds the `tessera` program and installs Tessera (for
# the C++ example's find_package), installs what the apps read (Fashion-MNIST), then runs every
# app of the README's "Example apps" table with the commands of its README and checks the figure
# the table states, within the tolerance it states (scripts/check_examples.py). Prints the table
# as the README should show it. 12-17 minutes on 2 cores; not part of scripts/test.sh, whose
# ctest runs each app's tiny variant instead.
#
# Usage: scripts/check_examples.sh [--only APP,...] [--work DIR]   (see check_examples.py --help)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
scripts/install_deps.sh --for-examples
scripts/build.sh default tessera_cli
cmake --install build/default >/dev/null
exec python3 scripts/check_examples.py "$@"
