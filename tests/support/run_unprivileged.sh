#!/usr/bin/env bash
# Runs a test program as an unprivileged user, for the cases that root cannot exercise (root
# reads a file whatever its permissions). As a user other than root it runs the program as it
# is; as root it copies the program where the "nobody" account can run it and drops to that
# account with setpriv (util-linux).
# Usage: run_unprivileged.sh PROGRAM [ARGS...]
set -euo pipefail
if [[ $(id -u) -ne 0 ]]; then exec "$@"; fi
program=$1; shift
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp "$program" "$scratch/"
chmod 755 "$scratch" "$scratch/$(basename "$program")"
cd "$scratch"
setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$scratch/$(basename "$program")" "$@"
