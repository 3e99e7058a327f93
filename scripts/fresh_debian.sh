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
#
# Needs root, debootstrap (Debian: apt-get install debootstrap) and the network to Debian's
# mirror (the one this machine's apt uses). Nothing is shared with the host but the kernel, the
# network and /dev: no /opt/tessera-deps, no ccache, no packages.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
[[ $# -ge 2 ]] || { usage >&2; exit 2; }
action=$1 dir=$(realpath -m "$2"); shift 2
[[ $(id -u) -eq 0 ]] || { echo "fresh_debian.sh: needs root (chroot, mounts)" >&2; exit 1; }

mirror() {
  local uri
  uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ { print $2; exit }')
  [[ -z $uri && -f /etc/apt/sources.list ]] && uri=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list)
  echo "${uri:-http://deb.debian.org/debian}"
}

unmount_all() {
  local root=$1 m
  for m in dev/shm dev/pts dev sys proc; do
    mountpoint -q "$root/$m" && umount -l "$root/$m"
  done
  return 0
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
    if grep -q " $root/" /proc/mounts; then
      echo "fresh_debian.sh: $root still has mounts; not removing it" >&2; exit 1
    fi
    rm -rf "$root"
    cp -a "$dir/pristine" "$root"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    git clone -q "$here" "$root/tessera"
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --bind /dev "$root/dev"
    mount -t devpts devpts "$root/dev/pts" 2>/dev/null || true
    mount -t tmpfs tmpfs "$root/dev/shm"
    trap 'unmount_all "$root"' EXIT
    start=$(date +%s)
    status=0
    chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      TERM=dumb LANG=C.UTF-8 bash -c 'cd /tessera && "$@"' fresh "$@" || status=$?
    end=$(date +%s)
    printf 'fresh_debian: %s exited %d after %d min %02d s on %d cores\n' "$*" "$status" \
      $(((end - start) / 60)) $(((end - start) % 60)) "$(nproc)"
    exit "$status"
    ;;
  *) usage >&2; exit 2 ;;
esac
