#!/usr/bin/env bash
# A real Slurm cluster on this machine for the `ibcollect --job` integration tests:
# munged, slurmctld and one slurmd per node, all on 127.0.0.1 with free ports, everything
# under DIR. Each slurmd runs in its own UTS + mount namespace with its own hostname and
# its own view of the RDMA hardware:
#   class:TREE   TREE/sys/class/infiniband is bound over /sys/class/infiniband
#   pci:TREE     TREE/sys/bus/pci/devices is bound over /sys/bus/pci/devices
#   none         no RDMA devices
# and a /dev/infiniband with a uverbs0 node, as a real RDMA node has. Requires root.
#
#   cluster.sh start DIR NAME=SPEC...   start (prints nothing; PIDs in DIR/pids/)
#   cluster.sh env DIR                  print `export SLURM_CONF=...` for clients
#   cluster.sh stop DIR                 cancel jobs and wait for them to end, then stop
#                                       exactly the daemons started (by PID); exit 1 when
#                                       a job process had to be killed
#   cluster.sh node-pids DIR NAME       PIDs of a node's slurmd and everything it started
#   cluster.sh mount-tmpfs DIR PATH OPTIONS [NAME...]
#                                       mount an empty tmpfs (mount -o OPTIONS) over PATH
#                                       in the named nodes' mount namespaces (default: all):
#                                       what the nodes see there differs from this machine
set -euo pipefail

cmd=${1:?usage: cluster.sh start|stop|env|node-pids|mount-tmpfs DIR ...}
D=${2:?DIR}
shift 2

pidfile() { echo "$D/pids/$1"; }

# Whether a process runs: exists and is not a zombie (an exited daemon whose parent, init
# here, has not reaped it yet still answers kill -0).
alive() {
  local st
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
  [ -n "$st" ] && [ "$st" != Z ]
}

free_port_base() {
  # N consecutive free TCP ports on 127.0.0.1.
  local need=$1 base tries=0
  while :; do
    base=$(( 20000 + (RANDOM * 7 + $$) % 30000 ))
    local used
    used=$(ss -Htan "sport >= :$base and sport < :$((base + need))" 2>/dev/null | wc -l)
    [ "$used" = 0 ] && { echo "$base"; return; }
    tries=$((tries + 1)); [ $tries -gt 50 ] && { echo "no free ports" >&2; exit 1; }
  done
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local secs=$1 what=$2; shift 2
  local deadline=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "cluster.sh: timed out waiting for $what" >&2
      tail -n 20 "$D"/log/* >&2 || true
      exit 1
    fi
    sleep 0.1
  done
}

# The mounts a node namespace gets once its slurmd is up (run through nsenter).
node_view() {
  local name=$1 spec=$2 kind=${spec%%:*} tree=${spec#*:}
  local nd="$D/nodes/$name"
  mkdir -p "$nd/origdev" "$nd/dev"
  cat > "$nd/view.sh" <<EOF
set -e
# /dev: a tmpfs with the original entries bound back, plus /dev/infiniband/uverbs0.
mount --rbind /dev "$nd/origdev"
mount -t tmpfs -o mode=755 tmpfs /dev
for e in "$nd"/origdev/* "$nd"/origdev/.[!.]*; do
  [ -e "\$e" ] || [ -L "\$e" ] || continue
  b=\$(basename "\$e")
  if [ -L "\$e" ]; then cp -P "\$e" "/dev/\$b"
  elif [ -d "\$e" ]; then mkdir -p "/dev/\$b"; mount --rbind "\$e" "/dev/\$b"
  else touch "/dev/\$b"; mount --bind "\$e" "/dev/\$b"; fi
done
mkdir -p /dev/infiniband
touch /dev/infiniband/uverbs0
chmod 666 /dev/infiniband/uverbs0
EOF
  case "$kind" in
    class)
      cat >> "$nd/view.sh" <<EOF
mkdir -p "$nd/origclass"
mount --bind /sys/class "$nd/origclass"
mount -t tmpfs -o mode=755 tmpfs /sys/class
for e in "$nd"/origclass/*; do
  b=\$(basename "\$e"); mkdir -p "/sys/class/\$b"; mount --rbind "\$e" "/sys/class/\$b"
done
mkdir -p /sys/class/infiniband
mount --bind "$tree/sys/class/infiniband" /sys/class/infiniband
EOF
      ;;
    pci)
      echo "mount --bind \"$tree/sys/bus/pci/devices\" /sys/bus/pci/devices" >> "$nd/view.sh"
      ;;
    none) ;;
    *) echo "cluster.sh: bad node spec $spec" >&2; exit 2 ;;
  esac
}

case "$cmd" in
start)
  mkdir -p "$D"/{state,log,spool,munge,pids,nodes}
  chmod 755 "$D" "$D/munge"
  names=()
  for arg in "$@"; do names+=("${arg%%=*}"); done
  n=${#names[@]}
  base=$(free_port_base $((n + 2)))

  mungekey --create --keyfile="$D/munge/munge.key" --force >/dev/null 2>&1
  chmod 600 "$D/munge/munge.key"
  munged --force --key-file="$D/munge/munge.key" --socket="$D/munge/munge.socket.2" \
    --pid-file="$D/munge/munged.pid" --log-file="$D/log/munged.log" --seed-file="$D/munge/munged.seed"
  wait_for 10 munged test -s "$D/munge/munged.pid"
  cp "$D/munge/munged.pid" "$(pidfile munged)"

  conf="$D/slurm.conf"
  cat > "$conf" <<EOF
ClusterName=ibctest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket.2
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd-%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
FirstJobId=1234
SlurmdTimeout=300
# A task that ignores SIGTERM is killed this many seconds after it (default 30).
KillWait=2
EOF
  i=0
  for name in "${names[@]}"; do
    echo "NodeName=$name NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 2 + i)) CPUs=2 State=UNKNOWN" >> "$conf"
    i=$((i + 1))
  done
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >> "$conf"
  export SLURM_CONF="$conf"

  setsid slurmctld -D -f "$conf" >"$D/log/slurmctld.out" 2>&1 &
  echo $! > "$(pidfile slurmctld)"
  wait_for 20 slurmctld scontrol ping

  for arg in "$@"; do
    name=${arg%%=*}; spec=${arg#*=}
    mkdir -p "$D/spool/$name"
    node_view "$name" "$spec"
    setsid unshare --uts --mount sh -c \
      "mount --make-rprivate / && hostname $name && exec slurmd -D -N $name -f $conf" \
      >"$D/log/slurmd-$name.out" 2>&1 &
    echo $! > "$(pidfile "slurmd-$name")"
  done
  for name in "${names[@]}"; do
    wait_for 30 "slurmd $name" sh -c "sinfo -h -N -n $name -o %t | grep -Eq '^(idle|mix|alloc)\$'"
    nsenter -t "$(cat "$(pidfile "slurmd-$name")")" -m sh "$D/nodes/$name/view.sh"
    # The node's UTS namespace: every process of this node (slurmd, its stepds, the jobs'
    # tasks) lives in it, which is how `stop` finds what a job left behind.
    readlink "/proc/$(cat "$(pidfile "slurmd-$name")")/ns/uts" > "$D/nodes/$name/uts"
  done
  ;;
env)
  echo "export SLURM_CONF=$D/slurm.conf"
  ;;
node-pids)
  name=${1:?NAME}
  root=$(cat "$(pidfile "slurmd-$name")")
  # The slurmd and every descendant (stepds, the agent it runs).
  pids="$root"
  frontier="$root"
  while [ -n "$frontier" ]; do
    next=""
    for p in $frontier; do
      for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do next="$next $c"; done
    done
    pids="$pids$next"
    frontier=${next# }
  done
  echo $pids
  ;;
mount-tmpfs)
  path=${1:?PATH}; opts=${2:?OPTIONS}; shift 2
  names=("$@")
  if [ ${#names[@]} -eq 0 ]; then
    for f in "$D"/pids/slurmd-*; do names+=("${f##*/slurmd-}"); done
  fi
  for name in "${names[@]}"; do
    # Every process the node starts later (slurmstepd, the tasks) inherits this view.
    nsenter -t "$(cat "$(pidfile "slurmd-$name")")" -m mount -t tmpfs -o "$opts" tmpfs "$path"
  done
  ;;
stop)
  export SLURM_CONF="$D/slurm.conf"
  # A node whose slurmd is gone (a test killed it) never reports its jobs complete:
  # down it, so slurmctld stops waiting for it.
  for f in "$D"/pids/slurmd-*; do
    [ -e "$f" ] || continue
    alive "$(cat "$f")" && continue
    timeout 10 scontrol update NodeName="${f##*/slurmd-}" State=DOWN Reason=stopped \
      >/dev/null 2>&1 || true
  done
  jobs=$(timeout 10 squeue -h -o %A 2>/dev/null || true)
  [ -n "$jobs" ] && { timeout 10 scancel --full --quiet $jobs >/dev/null 2>&1 || true; }
  # scancel only asks: the slurmds tell their stepds, which end the tasks. Stopping slurmd
  # before that leaves stepds and tasks (the jobs' `sleep`) behind. Wait, bounded, until
  # slurmctld lists no job (running or completing).
  deadline=$(( $(date +%s) + 30 ))
  while [ -n "$(timeout 10 squeue -h -o %A 2>/dev/null || echo unknown)" ]; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "cluster.sh: jobs still listed after 30 s: $(squeue -h 2>&1 | tr '\n' ';')" >&2
      break
    fi
    sleep 0.1
  done
  for f in "$D"/pids/slurmd-*; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    kill -CONT "$pid" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
  done
  for f in slurmctld munged; do
    [ -e "$(pidfile $f)" ] && kill -TERM "$(cat "$(pidfile $f)")" 2>/dev/null || true
  done
  # Reap: give them a moment, then make sure.
  for f in "$D"/pids/*; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  # Whatever is still in a node's namespace was left by a job: name it, stop it.
  leftover=0
  for u in "$D"/nodes/*/uts; do
    [ -s "$u" ] || continue
    ns=$(cat "$u")
    for p in /proc/[0-9]*; do
      [ "$(readlink "$p/ns/uts" 2>/dev/null)" = "$ns" ] || continue
      pid=${p#/proc/}
      echo "cluster.sh: left behind on $(basename "$(dirname "$u")"): $pid $(tr '\0' ' ' < "$p/cmdline" 2>/dev/null)" >&2
      kill -CONT "$pid" 2>/dev/null || true
      kill -KILL "$pid" 2>/dev/null || true
      leftover=1
    done
  done
  exit $leftover
  ;;
*)
  echo "usage: cluster.sh start|stop|env|node-pids|mount-tmpfs DIR ..." >&2
  exit 2
  ;;
esac
