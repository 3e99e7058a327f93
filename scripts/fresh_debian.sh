#!/usr/bin/env bash
# Runs a command of this repository as a newcomer would on a fresh Debian 12 machine, and times
# it: a minimal Debian 12 made with debootstrap from Debian's own packages (only git, python3 and
# ca-certificates added: no compiler, no cmake), a clone of this checkout's HEAD in it, and the
# command run there as root with the machine's CPUs. What the README's quick-start and test
# timings are measured with.
#
#   scripts/fresh_debian.sh make DIR            debootstrap a fresh root into DIR (kept as a
#                                               pristine copy, DIR/pristine)
#   scripts/fresh_debian.sh run DIR COMMAND...  copy DIR/pristine to DIR/root, clone HEAD into
#                                               DIR/root/tessera, run COMMAND there, print the
#                                               wall time; the root is kept for a look afterwards
#   scripts/fresh_debian.sh exec DIR COMMAND...  run COMMAND in DIR/root as the last run left it
#                                               (packages installed, build made), timed
#
# Needs root, debootstrap (Debian: apt-get install debootstrap) and the network to Debian's
# mirror (the one this machine's apt uses). Nothing is shared with the host but the kernel, the
# network and /dev: no /opt/tessera-deps, no ccache, no packages.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
[[ $# -ge 2 ]] || { usage >&2; exit 2; }
action=$1 dir=$(realpath -m "$2"); shift 2
[[ $(id -u) -eq 0 ]] || { echo "fresh_debian.sh: needs root (chroot, mounts)" >&2; exit 1; }

mirror() {
  local uri
  uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ { print $2; exit }')
  [[ -z $uri && -f /etc/apt/sources.list ]] && uri=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list)
  echo "${uri:-http://deb.debian.org/debian}"
}

# Ends what still runs inside the root (a test's stray process) and unmounts everything under
# it, deepest first: ours and any a command made there (ip netns mounts its run/netns).
unmount_all() {
  local root=$1 p m
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/root" 2>/dev/null) == "$root" ]] && kill -9 "${p#/proc/}" 2>/dev/null
  done
  awk -v r="$root" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" || true
  done
  return 0
}

# Enters the root with a clean environment and runs "$@" in /tessera.
enter() {
  local root=$1; shift
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM=dumb LANG=C.UTF-8 bash -c 'cd /tessera && "$@"' fresh "$@"
}

mount_all() {
  local root=$1
  # The root is a mount point, as / is on a machine: `ip -n` (cluster.sh's node links) makes
  # "/" a slave mount, which fails on a plain directory.
  mountpoint -q "$root" || mount --bind "$root" "$root"
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --bind /dev "$root/dev"
  mount -t devpts devpts "$root/dev/pts" 2>/dev/null || true
  mount -t tmpfs tmpfs "$root/dev/shm"
}

# timed_run ROOT NOTE COMMAND...: mounts, runs COMMAND in ROOT, prints its wall time, exits
# with its status; unmounts on the way out.
timed_run() {
  local root=$1 note=$2 start end status=0
  shift 2
  mount_all "$root"
  trap "unmount_all '$root'" EXIT
  start=$(date +%s)
  enter "$root" "$@" || status=$?
  end=$(date +%s)
  printf 'fresh_debian: %s exited %d after %d min %02d s on %d cores%s\n' "$*" "$status" \
    $(((end - start) / 60)) $(((end - start) % 60)) "$(nproc)" "$note"
  exit "$status"
}

case "$action" in
  make)
    command -v debootstrap >/dev/null || { echo "fresh_debian.sh: no debootstrap (apt-get install debootstrap)" >&2; exit 1; }
    mkdir -p "$dir"
    rm -rf "$dir/pristine"
    debootstrap --variant=minbase --include=git,python3,ca-certificates bookworm "$dir/pristine" "$(mirror)"
    echo "fresh Debian 12 root in $dir/pristine"
    ;;
  run)
    [[ $# -ge 1 ]] || { usage >&2; exit 2; }
    [[ -d $dir/pristine ]] || { echo "fresh_debian.sh: no $dir/pristine (run: fresh_debian.sh make $dir)" >&2; exit 1; }
    root=$dir/root
    [[ -d $root ]] && unmount_all "$root"
    # Never delete through a mount that is still there (its /dev would be the host's).
    if grep -q " $root[/ ]" /proc/mounts; then
      echo "fresh_debian.sh: $root still has mounts; not removing it" >&2; exit 1
    fi
    rm -rf "$root"
    cp -a "$dir/pristine" "$root"
    # The network files a machine has from its installer: name service, and its own name
    # (MPI looks it up; without it every lookup waits for DNS to time out).
    cp /etc/resolv.conf /etc/hosts /etc/hostname "$root/etc/"
    git clone -q "$here" "$root/tessera"
    timed_run "$root" "" "$@"
    ;;
  exec)
    [[ $# -ge 1 ]] || { usage >&2; exit 2; }
    root=$dir/root
    [[ -d $root/tessera ]] || { echo "fresh_debian.sh: no $root/tessera (run: fresh_debian.sh run $dir ...)" >&2; exit 1; }
    timed_run "$root" " (in the root as the last run left it)" "$@"
    ;;
  *) usage >&2; exit 2 ;;
esac
