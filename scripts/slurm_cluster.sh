#!/usr/bin/env bash
# A real Slurm on the emulated cluster (docs/slurm.md): scripts/cluster.sh makes the nodes
# (network and UTS namespaces, cpusets, shaped links), then this starts munge, one slurmctld
# (on node 0, which is also the login node and a compute node, as on a small site) and one
# slurmd per node with that node's CPUs and memory, in one partition. Jobs are submitted from
# node 0 with `exec`, as from a login node:
#
#   scripts/slurm_cluster.sh up N [--name NAME] [--kill-wait SECONDS] [cluster.sh up options]
#   scripts/slurm_cluster.sh exec [--name NAME] -- COMMAND...   (sbatch, squeue, srun, ...)
#   scripts/slurm_cluster.sh lose [--name NAME] K     (node K crashes: all its processes killed)
#   scripts/slurm_cluster.sh revive [--name NAME] K   (node K's slurmd starts again)
#   scripts/slurm_cluster.sh down [--name NAME]
#   scripts/slurm_cluster.sh check
#
# Every file of the cluster (slurm.conf, the munge key and socket, spools, logs) lives in its
# state folder (/run/tessera-cluster/NAME/slurm); logs are copied out by `down` when
# TESSERA_SLURM_LOGS names a folder. Containment: each node's jobs run inside the node's
# cpuset (cluster.sh), so a job's tasks get that node's CPUs; Slurm's own cgroup plugins are
# not used, because every slurmd of the cluster would share one cgroup tree and Debian builds
# Slurm without --enable-multiple-slurmd, which names those trees per node. Tasks are not bound
# inside a node (task/none; see write_config). Needs root, the packages slurmctld, slurmd,
# slurm-client and munge (scripts/install_deps.sh --for-tests), and what cluster.sh needs.
set -euo pipefail

readonly self=$(readlink -f "$0")
readonly here=$(dirname "$self")
readonly cluster="$here/cluster.sh"
readonly state_root=${TESSERA_CLUSTER_STATE:-/run/tessera-cluster}

die() { echo "slurm_cluster.sh: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'; }

slurm_dir() { echo "$state_root/$1/slurm"; }
node_name() { echo "ts$1-node$2"; }

# Why Slurm cannot run here, or nothing.
cannot_run() {
  local tool
  for tool in slurmctld slurmd sbatch srun scontrol sinfo munged mungekey; do
    command -v "$tool" >/dev/null || { echo "'$tool' not found (install slurmctld, slurmd, slurm-client and munge: scripts/install_deps.sh --for-tests)"; return 0; }
  done
  local plugins
  plugins=$(dirname "$(find /usr/lib -name mpi_pmix.so -path '*slurm*' 2>/dev/null | head -1)" 2>/dev/null || true)
  [[ -n $plugins && -f $plugins/mpi_pmix.so ]] || { echo "Slurm's PMIx plugin (mpi_pmix.so) is not installed"; return 0; }
  local reason
  reason=$("$cluster" check 2>&1) || { echo "${reason#no emulated cluster here: }"; return 0; }
}

only_cluster() {
  local -a up=()
  [[ -d $state_root ]] && mapfile -t up < <(for d in "$state_root"/*/slurm; do [[ -d $d ]] && basename "$(dirname "$d")"; done)
  ((${#up[@]} == 1)) || die "$( ((${#up[@]} == 0)) && echo "no Slurm cluster is up ('up N' makes one)" || echo "several Slurm clusters are up (${up[*]}): give --name")"
  echo "${up[0]}"
}

# The node's memory for slurm.conf, in MB: the machine's divided among the nodes, less a tenth
# for what is not the jobs'.
node_memory_mb() {
  local nodes=$1 kb
  kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
  echo $((kb / 1024 * 9 / 10 / nodes))
}

write_config() {
  local name=$1 nodes=$2 cpus=$3 kill_wait=$4 subnet=$5
  local dir prefix k
  dir=$(slurm_dir "$name")
  prefix=${subnet%.0/24}
  local memory
  memory=$(node_memory_mb "$nodes")
  {
    echo "# Written by scripts/slurm_cluster.sh for the emulated cluster '$name'."
    echo "ClusterName=tessera$name"
    echo "SlurmctldHost=$(node_name "$name" 0)($prefix.1)"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    # cred_expire: how long a job's credentials stay valid, and so how long a requeued job is held
    # before it may start again (Slurm's default 120 s; released sooner, its launch is refused
    # with "Job credential revoked"). 10 s keeps requeue tests short.
    echo "AuthInfo=socket=$dir/munge.socket,cred_expire=10"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "StateSaveLocation=$dir/state"
    # One path for every node, each slurmd seeing its own folder there (a bind mount in a mount
    # namespace of its own, start_slurmd): the PMIx plugin joins this path to socket names
    # without expanding %n, so per-node paths written as spool/%n break srun --mpi=pmix.
    echo "SlurmdSpoolDir=$dir/spool/node"
    echo "SlurmctldPidFile=$dir/slurmctld.pid"
    echo "SlurmdPidFile=$dir/slurmd.%n.pid"
    echo "SlurmctldLogFile=$dir/slurmctld.log"
    echo "SlurmdLogFile=$dir/slurmd.%n.log"
    echo "SlurmctldDebug=info"
    echo "SlurmdDebug=info"
    # Each node is a network namespace of its own: the standard ports do not collide between
    # nodes or with a second cluster.
    echo "SlurmctldPort=6817"
    echo "SlurmdPort=6818"
    echo "ProctrackType=proctrack/linuxproc"
    # Not task/affinity: it binds to CPU numbers counted from 0 on every node, and node K's
    # CPUs are the machine's K-th block (cluster.sh); the node's cpuset does the binding.
    echo "TaskPlugin=task/none"
    echo "MpiDefault=pmix"
    echo "SchedulerType=sched/backfill"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    # The configured CPUs and memory, not what slurmd sees of the whole machine.
    echo "SlurmdParameters=config_overrides"
    echo "ReturnToService=2"
    # A lost node is noticed within seconds rather than minutes, so the tests see the requeue.
    echo "SlurmdTimeout=10"
    echo "SlurmctldTimeout=10"
    echo "MessageTimeout=5"
    echo "KillWait=$kill_wait"
    echo "InactiveLimit=0"
    echo "MinJobAge=600"
    echo "JobRequeue=1"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "JobCompType=jobcomp/none"
    echo "PlugStackConfig=$dir/plugstack.conf"
    for ((k = 0; k < nodes; k++)); do
      echo "NodeName=$(node_name "$name" "$k") NodeAddr=$prefix.$((k + 1)) CPUs=$cpus RealMemory=$memory State=UNKNOWN"
    done
    echo "PartitionName=cluster Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO"
  } >"$dir/slurm.conf"
  : >"$dir/plugstack.conf"
}

# Runs COMMAND in the background on node K (cluster.sh exec), detached, its output to LOG.
start_on_node() {
  local name=$1 k=$2 log=$3
  shift 3
  setsid "$cluster" exec --name "$name" "$k" -- "$@" </dev/null >>"$log" 2>&1 &
}

# Node K's slurmd, in a mount namespace of its own where its spool folder and /tmp are the
# node's: the PMIx plugin and Open MPI keep per-node files there under names that would collide
# between nodes sharing one, and a real node has its own /tmp.
start_slurmd() {
  local name=$1 k=$2 dir node
  dir=$(slurm_dir "$name")
  node=$(node_name "$name" "$k")
  mkdir -p "$dir/spool/$node" "$dir/spool/node" "$dir/tmp/$node"
  chmod 1777 "$dir/tmp/$node"
  start_on_node "$name" "$k" "$dir/slurmd.$k.out" unshare --mount --propagation private -- /bin/sh -c \
    'mount --bind "$1" "$2" && mount --bind "$3" /tmp && exec slurmd -D -f "$4" -N "$5"' slurmd \
    "$dir/spool/$node" "$dir/spool/node" "$dir/tmp/$node" "$dir/slurm.conf" "$node"
}

# Reads lose's and revive's arguments, [--name NAME] K, into `name` and `node`.
read_node_arguments() {
  local what=$1
  shift
  name=""
  while [[ ${1:-} == --name ]]; do name=${2:?--name needs a value}; shift 2; done
  node=${1:?$what: give a node number}
  [[ -n $name ]] || name=$(only_cluster)
  [[ $node =~ ^[0-9]+$ && -e /run/netns/ts$name-n$node ]] || die "$what: there is no node '$node' in cluster '$name'"
}

# A lost node: everything on node K (its slurmd, job steps and ranks) is killed at once, as
# when a node crashes; Slurm notices it after SlurmdTimeout (10 s) and marks it down.
cmd_lose() {
  local name node
  read_node_arguments lose "$@"
  ((node != 0)) || die "lose: node 0 holds the controller; lose another node"
  ip netns pids "ts$name-n$node" | xargs -r kill -9
  echo "node $node of '$name' lost: its processes were killed"
}

# Brings a lost node back: its slurmd starts again and, with ReturnToService=2, the node
# returns to service when it registers.
cmd_revive() {
  local name node
  read_node_arguments revive "$@"
  start_slurmd "$name" "$node"
  echo "node $node of '$name': slurmd started again"
}

wait_for_nodes() {
  local name=$1 nodes=$2 timeout=$3 dir idle=0 waited=0
  dir=$(slurm_dir "$name")
  while ((waited < timeout)); do
    idle=$(in_login_node "$name" sinfo --noheader --states=idle --format=%D 2>/dev/null | awk '{s += $1} END {print s + 0}')
    ((idle == nodes)) && return 0
    sleep 1
    waited=$((waited + 1))
  done
  echo "slurm_cluster.sh: after ${timeout}s $idle of $nodes node(s) are idle; the logs:" >&2
  tail -n 20 "$dir"/*.log >&2 || true
  return 1
}

in_login_node() {
  local name=$1
  shift
  SLURM_CONF=$(slurm_dir "$name")/slurm.conf "$cluster" exec --name "$name" 0 -- "$@"
}

cmd_up() {
  local nodes=${1:-}
  [[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 1 && nodes <= 64)) || die "up: give the number of nodes (1 to 64), e.g. 'up 2'"
  shift
  local name="s$(printf '%05d' $(($$ % 100000)))" kill_wait=30
  local -a cluster_args=()
  while (($#)); do
    case $1 in
      --name) name=${2:?--name needs a value}; shift 2 ;;
      --kill-wait) kill_wait=${2:?--kill-wait needs seconds}; shift 2 ;;
      *) cluster_args+=("$1"); shift ;;
    esac
  done
  [[ $kill_wait =~ ^[0-9]+$ ]] && ((kill_wait >= 1 && kill_wait <= 600)) || die "--kill-wait '$kill_wait': give 1 to 600 seconds"
  local reason
  reason=$(cannot_run) || true
  [[ -z $reason ]] || die "cannot start Slurm here: $reason"
  "$cluster" up "$nodes" --name "$name" "${cluster_args[@]}"
  trap 'cmd_down --name "$name" >/dev/null 2>&1 || true' ERR
  local state="$state_root/$name/cluster"
  local subnet cpus
  subnet=$(sed -n 's/^subnet=//p' "$state")
  cpus=$(awk '/^node 0:/ {print $NF}' "$state" | tr ',' '\n' | wc -l)
  local dir
  dir=$(slurm_dir "$name")
  mkdir -p "$dir/state" "$dir/spool"
  chmod 700 "$dir"
  write_config "$name" "$nodes" "$cpus" "$kill_wait" "$subnet"
  # One munged for the cluster, on the host: its socket is a file, which every node's
  # namespace sees, and all nodes share the key as a site's nodes would.
  mungekey -c -k "$dir/munge.key"
  munged -f --socket="$dir/munge.socket" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munged.seed"
  start_on_node "$name" 0 "$dir/slurmctld.out" slurmctld -D -i -f "$dir/slurm.conf"
  local k
  for ((k = 0; k < nodes; k++)); do start_slurmd "$name" "$k"; done
  wait_for_nodes "$name" "$nodes" 60
  trap - ERR
  echo "slurm '$name' up: $nodes node(s) of $cpus CPU(s), partition 'cluster', controller on $(node_name "$name" 0); submit with: $0 exec --name $name -- sbatch ..."
}

# Sends SIGTERM to the daemon of each pid file given (what ignores it, cluster.sh down kills).
stop_pid_files() {
  local pid_file pid
  for pid_file in "$@"; do
    [[ -f $pid_file ]] || continue
    pid=$(cat "$pid_file" 2>/dev/null || true)
    [[ $pid =~ ^[0-9]+$ ]] && kill -TERM "$pid" 2>/dev/null || true
  done
}

cmd_down() {
  local name=""
  while [[ ${1:-} == --name ]]; do name=${2:?--name needs a value}; shift 2; done
  (($# == 0)) || die "down: unknown argument '$1'"
  [[ -n $name ]] || name=$(only_cluster)
  local dir
  dir=$(slurm_dir "$name")
  if [[ -d $dir ]]; then
    stop_pid_files "$dir"/slurmd.*.pid "$dir/slurmctld.pid"
    sleep 1
    [[ -f $dir/munged.pid ]] && munged -s --socket="$dir/munge.socket" >/dev/null 2>&1 || true
    if [[ -n ${TESSERA_SLURM_LOGS:-} ]]; then
      mkdir -p "$TESSERA_SLURM_LOGS" && cp "$dir"/*.log "$dir"/*.out "$TESSERA_SLURM_LOGS"/ 2>/dev/null || true
    fi
  fi
  # Whatever still runs in a node (job steps, a daemon that ignored TERM) is killed here.
  "$cluster" down --name "$name"
}

cmd_exec() {
  local name=""
  while [[ ${1:-} == --name ]]; do name=${2:?--name needs a value}; shift 2; done
  [[ ${1:-} == -- ]] && shift
  (($#)) || die "exec: give a command after --, e.g. 'exec -- sbatch job.sh'"
  [[ -n $name ]] || name=$(only_cluster)
  [[ -f $(slurm_dir "$name")/slurm.conf ]] || die "no Slurm cluster named '$name' is up"
  in_login_node "$name" "$@"
}

case ${1:-} in
  up) shift; cmd_up "$@" ;;
  down) shift; cmd_down "$@" ;;
  exec) shift; cmd_exec "$@" ;;
  lose) shift; cmd_lose "$@" ;;
  revive) shift; cmd_revive "$@" ;;
  check) reason=$(cannot_run) || true; [[ -z $reason ]] && echo "a Slurm cluster can be made here" || { echo "no Slurm cluster here: $reason"; exit 1; } ;;
  -h | --help | help) usage ;;
  "") usage >&2; exit 2 ;;
  *) die "unknown command '$1' (see --help)" ;;
esac
