#!/usr/bin/env bash
# An emulated cluster on one machine (docs/cluster.md): each node a network namespace with its
# own hostname and its own CPUs (a cpuset cgroup), joined to the others through veth pairs on a
# bridge that has no uplink, each link shaped to a bandwidth with tc tbf, each node optionally
# held to a share of its CPUs with the cgroup cpu controller and to a memory limit with the
# memory controller. Open MPI starts its daemons on the nodes through this script
# (as its ssh), so MPI sees separate hosts: shared memory inside a node, shaped TCP between.
#
#   scripts/cluster.sh up N [--name NAME] [--bandwidth RATE] [--burst SIZE] [--slots S]
#                           [--cpus-per-node C] [--cpu-share NODE=FRACTION ...]
#                           [--memory NODE=SIZE ...]
#                           [--subnet 10.A.B.0/24]
#   scripts/cluster.sh run [--name NAME] -- MPIRUN-ARGS...
#   scripts/cluster.sh exec [--name NAME] NODE -- COMMAND...
#   scripts/cluster.sh with N [up options] -- MPIRUN-ARGS...   (up, run, down on any exit)
#   scripts/cluster.sh down [--name NAME]
#   scripts/cluster.sh status [--name NAME]
#
# Needs root, iproute2 (ip, tc), util-linux (unshare) and Open MPI.
set -euo pipefail

readonly self=$(readlink -f "$0")
readonly state_root=${TESSERA_CLUSTER_STATE:-/run/tessera-cluster}
readonly cgroup_root=/sys/fs/cgroup/cpu
readonly cpuset_root=/sys/fs/cgroup/cpuset
readonly memory_root=/sys/fs/cgroup/memory

die() { echo "cluster.sh: $*" >&2; exit 2; }

usage() {
  sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'
}

# Every kernel object of a cluster carries its name: namespaces ts<NAME>-n<K>, links
# ts<NAME>-br (bridge) and ts<NAME>-h<K> (host end of node K's veth), cgroups tessera-<NAME>.
# Interface names are at most 15 characters, hence the six-character limit on NAME.
check_name() {
  [[ $1 =~ ^[a-z0-9]{1,6}$ ]] || die "--name '$1': use 1 to 6 lowercase letters or digits"
}
node_ns() { echo "ts$1-n$2"; }
bridge_of() { echo "ts$1-br"; }
host_end() { echo "ts$1-h$2"; }
state_dir() { echo "$state_root/$1"; }

require_root_tools() {
  [[ $(id -u) == 0 ]] || die "needs root: network namespaces, veth links and tc qdiscs are made as root (run it with sudo)"
  local tool
  for tool in ip tc unshare nsenter mpirun; do
    command -v "$tool" >/dev/null || die "'$tool' not found: install iproute2, util-linux and openmpi-bin"
  done
}

# Whether this machine can make what a cluster is made of; prints why not. Used by the tests to
# skip with a visible reason instead of failing where namespaces are not allowed (a container
# without CAP_SYS_ADMIN, a user without root).
can_emulate() {
  if [[ $(id -u) != 0 ]]; then echo "not root"; return 1; fi
  local tool probe="tsprobe$$"
  for tool in ip tc unshare nsenter mpirun; do
    command -v "$tool" >/dev/null || { echo "'$tool' not found"; return 1; }
  done
  if ! ip netns add "$probe" 2>/dev/null; then echo "cannot make a network namespace (ip netns add)"; return 1; fi
  local ok=0
  nsenter --net="/run/netns/$probe" unshare --uts true 2>/dev/null || ok=1
  # `ip -n` (how the nodes' links are set up) switches namespace with a mount namespace of its
  # own, which fails where / is not a mount point (a plain chroot).
  local switch_ok=0
  ((ok == 0)) && { ip -n "$probe" link set lo up 2>/dev/null || switch_ok=1; }
  ip netns del "$probe" 2>/dev/null || true
  if ((ok != 0)); then echo "cannot make a UTS namespace inside a network namespace (unshare --uts)"; return 1; fi
  if ((switch_ok != 0)); then echo "ip -n cannot enter a network namespace (is / a mount point?)"; return 1; fi
  if ! ip link add "tsprb$$" type bridge 2>/dev/null; then echo "cannot make a bridge (ip link add type bridge)"; return 1; fi
  ok=0
  tc qdisc add dev "tsprb$$" root tbf rate 1gbit burst 128kb latency 50ms 2>/dev/null || ok=1
  ip link del "tsprb$$" 2>/dev/null || true
  if ((ok != 0)); then echo "cannot shape a link (tc qdisc add ... tbf: no sch_tbf in this kernel?)"; return 1; fi
  return 0
}

# A range for the nodes that nothing on this machine routes: the addresses then exist only
# inside the cluster's namespaces, and with no uplink and no default route there no packet
# can leave the machine.
pick_subnet() {
  local name=$1 requested=$2
  local subnet=$requested
  if [[ -z $subnet ]]; then
    local sum
    sum=$(printf '%s' "$name" | cksum | cut -d' ' -f1)
    subnet="10.$((200 + sum % 50)).$(((sum / 50) % 256)).0/24"
  fi
  [[ $subnet =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)\.0/24$ ]] || die "--subnet '$subnet': give a /24 such as 10.213.7.0/24"
  local routes
  routes=$( { ip -4 route show match "$subnet"; ip -4 route show root "$subnet"; } | grep -v '^default' || true)
  [[ -z $routes ]] || die "the range $subnet is already routed on this machine ($routes); choose another with --subnet"
  if ip -4 -o addr show | awk '{print $4}' | grep -q "^${subnet%.0/24}\."; then
    die "an interface of this machine already has an address in $subnet; choose another with --subnet"
  fi
  echo "$subnet"
}

cpu_quota_us() {
  # A share of the node's CPUs, as a CFS quota over a 100 ms period.
  awk -v share="$1" -v cpus="$2" 'BEGIN { q = int(share * cpus * 100000); if (q < 1000) q = 1000; print q }'
}

# The CPUs of node K of N, C each, as a cpuset list: consecutive blocks of the machine's CPUs,
# wrapping around (and so shared) when the nodes need more CPUs than the machine has.
# The machine's CPUs, one per line. Not nproc: it honours OMP_NUM_THREADS.
machine_cpus() {
  expand_cpu_list "$(cat "$cpuset_root/cpuset.effective_cpus" 2>/dev/null || echo "0-$(($(nproc --all) - 1))")"
}

node_cpus() {
  local k=$1 c=$2
  local -a all
  mapfile -t all < <(machine_cpus)
  local i list=""
  for ((i = 0; i < c; i++)); do list+="${list:+,}${all[$(((k * c + i) % ${#all[@]}))]}"; done
  echo "$list"
}

expand_cpu_list() {
  local part
  for part in ${1//,/ }; do
    if [[ $part == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
  done
}

# Gives node K its own CPUs: without a cpuset every node's ranks would see all of the machine's
# CPUs, and Tessera's per-node placement would bind each node's first rank to the same core.
make_node_cpuset() {
  local name=$1 k=$2 cpus=$3
  local parent="$cpuset_root/tessera-$name"
  if [[ ! -d $parent ]]; then
    mkdir "$parent"
    cat "$cpuset_root/cpuset.cpus" >"$parent/cpuset.cpus"
    cat "$cpuset_root/cpuset.mems" >"$parent/cpuset.mems"
  fi
  mkdir "$parent/n$k"
  echo "$cpus" >"$parent/n$k/cpuset.cpus"
  cat "$parent/cpuset.mems" >"$parent/n$k/cpuset.mems"
}

cmd_up() {
  local nodes=${1:-}
  [[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 1 && nodes <= 64)) || die "up: give the number of nodes (1 to 64), e.g. 'up 2'"
  shift
  local name="c$(printf '%05d' $(($$ % 100000)))" bandwidth="" burst="128kb" slots=2 subnet=""
  local cpus
  cpus=$(machine_cpus | wc -l)
  local per_node=$((cpus / nodes))
  ((per_node >= 1)) || per_node=1
  local -a shares=() memories=()
  while (($#)); do
    case $1 in
      --name) name=${2:?--name needs a value}; shift 2 ;;
      --bandwidth) bandwidth=${2:?--bandwidth needs a rate such as 1gbit}; shift 2 ;;
      --burst) burst=${2:?--burst needs a size such as 128kb}; shift 2 ;;
      --slots) slots=${2:?--slots needs a count}; shift 2 ;;
      --cpus-per-node) per_node=${2:?--cpus-per-node needs a count}; shift 2 ;;
      --cpu-share) shares+=("${2:?--cpu-share needs NODE=FRACTION}"); shift 2 ;;
      --memory) memories+=("${2:?--memory needs NODE=SIZE}"); shift 2 ;;
      --subnet) subnet=${2:?--subnet needs a range}; shift 2 ;;
      *) die "up: unknown option '$1' (see --help)" ;;
    esac
  done
  check_name "$name"
  require_root_tools
  [[ $slots =~ ^[1-9][0-9]*$ ]] || die "--slots '$slots': give a positive count"
  [[ $per_node =~ ^[1-9][0-9]*$ ]] || die "--cpus-per-node '$per_node': give a positive count"
  if [[ ! -d $cpuset_root ]]; then
    echo "cluster.sh: warning: no cgroup v1 cpuset controller at $cpuset_root: every node sees all of the machine's CPUs, so keep ranks unbound (OMP_PROC_BIND=false) or nodes' first ranks share a core" >&2
  fi
  [[ -z $bandwidth || $bandwidth =~ ^[0-9.]+([kmg]?bit|[kmg]?bps)$ ]] ||
    die "--bandwidth '$bandwidth': give a tc rate such as 800mbit or 2gbit"
  local dir
  dir=$(state_dir "$name")
  [[ ! -e $dir ]] || die "a cluster named '$name' is up already ($dir); take it down with 'down --name $name' or choose another --name"
  subnet=$(pick_subnet "$name" "$subnet")
  local share
  for share in "${shares[@]}"; do
    [[ $share =~ ^([0-9]+)=(0?\.[0-9]+|1(\.0*)?)$ ]] || die "--cpu-share '$share': give NODE=FRACTION, e.g. 1=0.5"
    ((BASH_REMATCH[1] < nodes)) || die "--cpu-share '$share': there is no node ${BASH_REMATCH[1]} in a cluster of $nodes"
  done
  local memory
  for memory in "${memories[@]}"; do
    [[ $memory =~ ^([0-9]+)=([1-9][0-9]*[KMG]?)$ ]] || die "--memory '$memory': give NODE=SIZE, e.g. 1=2G"
    ((BASH_REMATCH[1] < nodes)) || die "--memory '$memory': there is no node ${BASH_REMATCH[1]} in a cluster of $nodes"
    [[ -d $memory_root ]] || die "--memory needs the cgroup v1 memory controller at $memory_root"
  done

  mkdir -p "$dir"
  # From here on, a failure takes down whatever was made.
  trap 'cmd_down --name "$name" >/dev/null 2>&1 || true' ERR
  local prefix=${subnet%.0/24}
  printf 'nodes=%s\nsubnet=%s\nbandwidth=%s\nslots=%s\n' "$nodes" "$subnet" "${bandwidth:-unshaped}" "$slots" >"$dir/cluster"
  ip link add "$(bridge_of "$name")" type bridge
  ip link set "$(bridge_of "$name")" up
  local k ns host
  : >"$dir/hostfile"
  for ((k = 0; k < nodes; k++)); do
    ns=$(node_ns "$name" "$k")
    host=$(host_end "$name" "$k")
    ip netns add "$ns"
    ip link add "$host" type veth peer name eth0 netns "$ns"
    ip link set "$host" master "$(bridge_of "$name")" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$prefix.$((k + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    if [[ -n $bandwidth ]]; then
      # Both ends: the host end shapes what reaches the node, the namespace end what leaves it,
      # so each node has a link of this rate each way, as through a non-blocking switch.
      tc qdisc add dev "$host" root tbf rate "$bandwidth" burst "$burst" latency 50ms
      tc -n "$ns" qdisc add dev eth0 root tbf rate "$bandwidth" burst "$burst" latency 50ms
    fi
    [[ -d $cpuset_root ]] && make_node_cpuset "$name" "$k" "$(node_cpus "$k" "$per_node")"
    echo "$prefix.$((k + 1)) slots=$slots" >>"$dir/hostfile"
    echo "node $k: $ns $prefix.$((k + 1)) $(hostname_of "$name" "$k") cpus $(node_cpus "$k" "$per_node")" >>"$dir/cluster"
  done
  for share in "${shares[@]}"; do
    k=${share%%=*}
    local group="$cgroup_root/tessera-$name/n$k"
    [[ -d $cgroup_root ]] || die "--cpu-share needs the cgroup v1 cpu controller at $cgroup_root"
    mkdir -p "$group"
    echo 100000 >"$group/cpu.cfs_period_us"
    cpu_quota_us "${share#*=}" "$per_node" >"$group/cpu.cfs_quota_us"
    echo "cpu share: node $k ${share#*=} of its $per_node CPU(s)" >>"$dir/cluster"
  done
  for memory in "${memories[@]}"; do
    k=${memory%%=*}
    local group="$memory_root/tessera-$name/n$k"
    mkdir -p "$group"
    echo "${memory#*=}" >"$group/memory.limit_in_bytes"
    echo "memory: node $k limited to ${memory#*=}" >>"$dir/cluster"
  done
  trap - ERR
  local shared=""
  ((nodes * per_node > cpus)) && shared=" (more than the machine's $cpus: nodes share CPUs)"
  echo "cluster '$name' up: $nodes node(s) of $per_node CPU(s)$shared on $subnet, links ${bandwidth:-unshaped}$( ((${#shares[@]})) && echo ", cpu shares ${shares[*]}")$( ((${#memories[@]})) && echo ", memory ${memories[*]}")"
}

hostname_of() { echo "ts$1-node$2"; }

# Removes a cluster's cgroups under one controller (PARENT/n<K>, then PARENT), killing what
# still runs in them: a cgroup with processes cannot be removed.
remove_cgroups() {
  local parent=$1 group
  [[ -d $parent ]] || return 0
  for group in "$parent"/n*; do
    [[ -d $group ]] || continue
    xargs -r kill -9 <"$group/cgroup.procs" 2>/dev/null || true
    rmdir "$group" 2>/dev/null || true
  done
  rmdir "$parent" 2>/dev/null || true
}

# Takes a cluster down; whatever part of it exists. Safe to run twice.
cmd_down() {
  local name=""
  while (($#)); do
    case $1 in
      --name) name=${2:?--name needs a value}; shift 2 ;;
      *) die "down: unknown option '$1'" ;;
    esac
  done
  [[ -n $name ]] || name=$(only_cluster)
  check_name "$name"
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^ts$name-n[0-9]*$" || true); do
    # Processes left in a node (a rank that outlived its job) would keep the namespace alive.
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  # Deleting a namespace removes its veth pairs, but asynchronously; remove them now so that
  # an 'up' right after finds nothing of the old cluster.
  local link
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep "^ts$name-h[0-9]*$" || true); do
    ip link del "$link" 2>/dev/null || true
  done
  ip link del "$(bridge_of "$name")" 2>/dev/null || true
  remove_cgroups "$cgroup_root/tessera-$name"
  remove_cgroups "$cpuset_root/tessera-$name"
  remove_cgroups "$memory_root/tessera-$name"
  rm -rf "$(state_dir "$name")"
  echo "cluster '$name' down"
}

# The name when exactly one cluster is up, so that run/exec/down need no --name then.
only_cluster() {
  local -a up=()
  [[ -d $state_root ]] && mapfile -t up < <(ls "$state_root")
  ((${#up[@]} == 1)) || die "$( ((${#up[@]} == 0)) && echo "no cluster is up ('up N' makes one)" || echo "several clusters are up (${up[*]}): give --name")"
  echo "${up[0]}"
}

read_state() {
  local name=$1
  local dir
  dir=$(state_dir "$name")
  [[ -f $dir/cluster ]] || die "no cluster named '$name' is up ('up N --name $name' makes one)"
  nodes=$(sed -n 's/^nodes=//p' "$dir/cluster")
  subnet=$(sed -n 's/^subnet=//p' "$dir/cluster")
}

# Runs a command on node K as a host of its own: in its network namespace, with its own
# hostname (Open MPI names shared-memory segments after the host, so nodes that shared one
# would collide), on its CPUs and inside its CPU share and memory limit if it has them.
enter_node() {
  local name=$1 k=$2
  shift 2
  local group="$cgroup_root/tessera-$name/n$k"
  # BASHPID: in a subshell (cmd_with's) $$ would move the parent shell instead.
  [[ -d $group ]] && echo "$BASHPID" >"$group/cgroup.procs"
  [[ -d $cpuset_root/tessera-$name ]] && echo "$BASHPID" >"$cpuset_root/tessera-$name/n$k/cgroup.procs"
  [[ -d $memory_root/tessera-$name/n$k ]] && echo "$BASHPID" >"$memory_root/tessera-$name/n$k/cgroup.procs"
  # nsenter rather than ip netns exec: that also remounts /sys in a mount namespace of its own,
  # which hides the cgroup file systems from the agent that mpirun starts inside node 0.
  exec nsenter --net="/run/netns/$(node_ns "$name" "$k")" unshare --uts -- "$self" __inside "$name" "$k" "$@"
}

cmd_inside() {
  local name=$1 k=$2
  shift 2
  hostname "$(hostname_of "$name" "$k")"
  exec "$@"
}

# Open MPI's ssh: called as AGENT HOST COMMAND..., runs COMMAND (a shell command line, as ssh
# would) on the node whose address is HOST.
cmd_agent() {
  local name=$1
  shift
  while [[ ${1:-} == -* ]]; do shift; done # ssh options Open MPI may add (-x)
  local host=${1:?agent: no host}
  shift
  read_state "$name"
  local k=$((${host##*.} - 1))
  [[ $host == "${subnet%.0/24}.$((k + 1))" ]] && ((k >= 0 && k < nodes)) || die "agent: $host is not a node of cluster '$name'"
  enter_node "$name" "$k" /bin/sh -c "$*"
}

mpirun_options() {
  local name=$1 dir
  dir=$(state_dir "$name")
  # The agent path must not contain spaces: Open MPI splits plm_rsh_agent on them.
  printf '%s\n' --hostfile "$dir/hostfile" \
    --mca plm_rsh_agent "$dir/agent" --mca plm_rsh_no_tree_spawn 1 \
    --mca oob_tcp_if_include "$subnet" --mca btl_tcp_if_include "$subnet" \
    --mca btl self,vader,tcp --bind-to none \
    --mca mpi_yield_when_idle 1 --allow-run-as-root
}

cmd_run() {
  local name=""
  while (($#)); do
    case $1 in
      --name) name=${2:?--name needs a value}; shift 2 ;;
      --) shift; break ;;
      *) die "run: unknown option '$1' (the mpirun arguments follow --)" ;;
    esac
  done
  (($#)) || die "run: give the mpirun arguments after --, e.g. 'run -- -np 4 tessera train model.json'"
  [[ -n $name ]] || name=$(only_cluster)
  read_state "$name"
  local dir
  dir=$(state_dir "$name")
  printf '#!/bin/sh\nexec %q agent %q "$@"\n' "$self" "$name" >"$dir/agent"
  chmod +x "$dir/agent"
  local -a opts
  mapfile -t opts < <(mpirun_options "$name")
  # mpirun runs on node 0, as a job's first node would; the other nodes' daemons are started
  # through the agent.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  enter_node "$name" 0 mpirun "${opts[@]}" "$@"
}

cmd_exec() {
  local name=""
  while [[ ${1:-} == --name ]]; do name=${2:?--name needs a value}; shift 2; done
  local k=${1:?exec: give a node number}
  shift
  [[ ${1:-} == -- ]] && shift
  (($#)) || die "exec: give a command after the node, e.g. 'exec 1 -- hostname'"
  [[ -n $name ]] || name=$(only_cluster)
  read_state "$name"
  [[ $k =~ ^[0-9]+$ ]] && ((k < nodes)) || die "exec: there is no node '$k' in cluster '$name' ($nodes node(s))"
  enter_node "$name" "$k" "$@"
}

cmd_with() {
  local nodes=${1:?with: give the number of nodes}
  shift
  local -a up_args=()
  while (($#)) && [[ $1 != -- ]]; do up_args+=("$1"); shift; done
  [[ ${1:-} == -- ]] || die "with: give the mpirun arguments after --"
  shift
  local name="w$(printf '%05d' $(($$ % 100000)))"
  local i
  for ((i = 0; i < ${#up_args[@]}; i++)); do
    [[ ${up_args[i]} == --name ]] && name=${up_args[i + 1]}
  done
  # Down on any exit, a signal included: the cluster lives exactly as long as the job.
  with_cluster=$name
  trap 'cmd_down --name "$with_cluster" >/dev/null 2>&1 || true' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  cmd_up "$nodes" --name "$name" "${up_args[@]}" >&2
  local rc=0
  (cmd_run --name "$name" -- "$@") || rc=$?
  return "$rc"
}

cmd_status() {
  local name=""
  [[ ${1:-} == --name ]] && name=${2:?--name needs a value}
  if [[ -z $name ]]; then
    [[ -d $state_root ]] && [[ -n $(ls "$state_root") ]] || { echo "no cluster is up"; return 0; }
    for name in $(ls "$state_root"); do echo "== $name"; cat "$(state_dir "$name")/cluster"; done
    return 0
  fi
  cat "$(state_dir "$name")/cluster"
}

case ${1:-} in
  up) shift; cmd_up "$@" ;;
  down) shift; cmd_down "$@" ;;
  run) shift; cmd_run "$@" ;;
  exec) shift; cmd_exec "$@" ;;
  with) shift; cmd_with "$@" ;;
  status) shift; cmd_status "$@" ;;
  check) reason=$(can_emulate) && echo "an emulated cluster can be made here" || { echo "no emulated cluster here: $reason"; exit 1; } ;;
  agent) shift; cmd_agent "$@" ;;
  __inside) shift; cmd_inside "$@" ;;
  -h | --help | help) usage ;;
  "") usage >&2; exit 2 ;;
  *) die "unknown command '$1' (see --help)" ;;
esac
