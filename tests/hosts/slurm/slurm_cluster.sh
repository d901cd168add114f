# A one-node Slurm 22.05 "cluster" for tests, run as root from a scratch
# folder, without systemd, cgroups or any change to the system.
#
#   source tests/hosts/slurm/slurm_cluster.sh
#   scratch=$(mktemp -d /tmp/slm.XXXXXX)     # keep it short: socket paths < 108 bytes
#   trap 'slurm_stop; rm -rf "$scratch"' EXIT
#   slurm_start "$scratch" [PMIX_LIB_DIR] || exit 1
#   slurm_srun -n 4 ./prog                   # srun -O --mpi=pmix, under a timeout
#   slurm_stop
#
# slurm_start SCRATCH [PMIX_LIB_DIR]
#   Writes SCRATCH/slurm.conf (free ports picked at run time), starts munged,
#   slurmctld and slurmd with everything (keys, sockets, state, spool, pids,
#   logs) inside SCRATCH, and waits until the node is idle. Exports SLURM_CONF.
#   With PMIX_LIB_DIR (a folder holding libpmix.so.2, normally also
#   libpmix-server.so.2), slurmd runs in a private mount namespace in which
#   that library replaces OpenPMIx, for the mpi/pmix_v4 plugin (slurmd,
#   slurmstepd) and for the tasks; slurm_srun runs srun in that namespace too.
# slurm_stop
#   Cancels what still runs, stops the daemons by their PIDs (TERM, then KILL),
#   and kills any slurmstepd or task of this cluster left behind. Safe to call
#   twice, from an EXIT trap, or after slurm_start failed half-way.
# slurm_srun ARGS...
#   srun -O --mpi=pmix ARGS under `timeout` ($SLURM_SRUN_TIMEOUT, 120 s).
#
# Every process this library starts carries SLURM_HARNESS_ID=SCRATCH in its
# environment; slurm_stop only kills processes that do or that hold a file of
# SCRATCH open (slurmstepd), never the caller or its ancestors.

SLURM_HARNESS_PMIX_DIR=/usr/lib/x86_64-linux-gnu/pmix2/lib   # the plugin dlopens libpmix.so here
SLURM_HARNESS_DEBIAN_LIB=/usr/lib/x86_64-linux-gnu/libpmix.so.2  # what the ranks' ld.so finds
SLURM_HARNESS_DIR=
SLURM_HARNESS_LIB_DIR=
SLURM_HARNESS_MUNGED_PID=
SLURM_HARNESS_SLURMCTLD_PID=
SLURM_HARNESS_SLURMD_PID=
SLURM_HARNESS_PORT_LOCK_FD=

_slurm_say() { echo "slurm_cluster: $*" >&2; }

_slurm_state() { sed -e 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }
_slurm_ppid() { sed -e 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f2; }

# A process is ours if it is alive (not a zombie) and either carries our
# marker or has a file of the scratch folder open. The second is for
# slurmstepd: it inherits slurmd's environment, but its setproctitle() blanks
# the memory /proc/PID/environ shows; it keeps slurmd.log open.
_slurm_ours() {
  local pid=$1 state
  [ -n "$pid" ] && [ -n "$SLURM_HARNESS_DIR" ] || return 1
  state=$(_slurm_state "$pid")
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ] || return 1
  grep -qsxzF "SLURM_HARNESS_ID=$SLURM_HARNESS_DIR" "/proc/$pid/environ" ||
    [ -n "$(find "/proc/$pid/fd" -maxdepth 1 -lname "$SLURM_HARNESS_DIR/*" -print -quit 2>/dev/null)" ]
}

# Every live process of this cluster but the caller and its ancestors.
_slurm_members() {
  local pid mine=" " p=$BASHPID
  while [ -n "$p" ] && [ "$p" -gt 1 ]; do mine="$mine$p "; p=$(_slurm_ppid "$p"); done
  mine="$mine$$ "
  for pid in $({ grep -lsxzF "SLURM_HARNESS_ID=$SLURM_HARNESS_DIR" /proc/[0-9]*/environ
                 find /proc/[0-9]*/fd -maxdepth 1 -lname "$SLURM_HARNESS_DIR/*" 2>/dev/null
               } | cut -d/ -f3 | sort -un); do
    case $mine in *" $pid "*) continue ;; esac
    _slurm_ours "$pid" && echo "$pid"
  done
}

# The tails of every log, for a CI log that explains a failure.
slurm_dump_logs() {
  local -; set +e   # errexit of a caller must not cut a cleanup short
  local f
  [ -n "$SLURM_HARNESS_DIR" ] || return 0
  # the daemons run in the foreground: NAME.out has all of NAME.log and what
  # came before the log file was opened
  local files=()
  for f in munged slurmctld slurmd; do
    f=$SLURM_HARNESS_DIR/log/$f.out
    [ -s "$f" ] || f=${f%.out}.log
    files+=("$f")
  done
  _slurm_show_tails 40 "${files[@]}"
}

# The last N lines of each FILE that is not empty, on stderr.
_slurm_show_tails() {
  local n=$1 f
  shift
  for f in "$@"; do
    [ -s "$f" ] || continue
    echo "----- last lines of $f -----" >&2
    tail -n "$n" "$f" >&2
  done
  echo "----- end of slurm logs -----" >&2
}

_slurm_fail() {
  _slurm_say "$*"
  slurm_dump_logs
  _slurm_unlock_ports
  slurm_stop
  return 1
}

# Free TCP ports: random, outside the ephemeral range (32768-60999), and not
# seen in /proc/net/tcp*. Harness instances pick theirs under a lock they hold
# until their daemons listen, so parallel tests never pick the same ports.
_slurm_port_busy() {
  grep -qs ":$(printf '%04X' "$1") " /proc/net/tcp /proc/net/tcp6
}
_slurm_free_port() {
  local p tries=0 taken=" ${*:-} "
  while [ $tries -lt 200 ]; do
    p=$((10000 + (RANDOM * 32768 + RANDOM) % 22000))
    tries=$((tries + 1))
    case $taken in *" $p "*) continue ;; esac
    _slurm_port_busy "$p" && continue
    echo "$p"
    return 0
  done
  return 1
}
_slurm_lock_ports() {
  exec {SLURM_HARNESS_PORT_LOCK_FD}>>/tmp/.slurm_cluster_ports.lock || return 1
  flock -w 120 "$SLURM_HARNESS_PORT_LOCK_FD"
}
_slurm_unlock_ports() {
  [ -n "$SLURM_HARNESS_PORT_LOCK_FD" ] || return 0
  exec {SLURM_HARNESS_PORT_LOCK_FD}>&-
  SLURM_HARNESS_PORT_LOCK_FD=
}
_slurm_listening() {  # PORT: is something listening on it (state 0A)?
  awk -v p=":$(printf '%04X' "$1")" '$4 == "0A" && substr($2, length($2) - 4) == p { found = 1 }
      END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# The folder that replaces OpenPMIx's lib folder in slurmd's mount namespace:
# copies (not links: a build may replace them under a running job) of the
# given libpmix.so.2 under every name the plugin, OpenPMIx's own symlinks and
# the ranks use, with libpmix-server.so.2 next to them.
_slurm_stage_pmix() {
  local src=$1 stage=$SLURM_HARNESS_DIR/pmixlib
  [ -f "$src/libpmix.so.2" ] || { _slurm_say "no libpmix.so.2 in $src"; return 1; }
  mkdir -p "$stage" || return 1
  cp -L "$src/libpmix.so.2" "$stage/libpmix.so.2.6.2" || return 1
  ln -s libpmix.so.2.6.2 "$stage/libpmix.so.2"
  ln -s libpmix.so.2.6.2 "$stage/libpmix.so"
  if [ -f "$src/libpmix-server.so.2" ]; then
    cp -L "$src/libpmix-server.so.2" "$stage/libpmix-server.so.2" || return 1
  else
    _slurm_say "note: no libpmix-server.so.2 in $src (fine for OpenPMIx, not for PMIx-CXX)"
  fi
  # OpenPMIx's MCA components, when the folder is an OpenPMIx build
  if [ -d "$src/pmix" ]; then cp -rL "$src/pmix" "$stage/pmix" || return 1; fi
  return 0
}

# Run inside `unshare -m --propagation private`, then exec slurmd:
# $1 = staged folder, rest = slurmd's command line.
# shellcheck disable=SC2016  # expanded by that bash, not this one
_SLURM_NS_SCRIPT='
stage=$1; shift
set -e
mount --bind "$stage" '"$SLURM_HARNESS_PMIX_DIR"'
# Debian: libpmix.so.2 -> pmix2/lib/libpmix.so.2.6.2, already ours through the
# mount above; a layout where it is a file of its own gets a bind of its own.
real=$(readlink -f '"$SLURM_HARNESS_DEBIAN_LIB"')
if ! cmp -s "$real" "$stage/libpmix.so.2.6.2"; then mount --bind "$stage/libpmix.so.2.6.2" "$real"; fi
set +e
for f in '"$SLURM_HARNESS_PMIX_DIR"'/libpmix.so '"$SLURM_HARNESS_DEBIAN_LIB"'; do
  cmp -s "$f" "$stage/libpmix.so.2.6.2" && continue
  echo "slurm_cluster: $f is not the staged library after the mounts" >&2
  exit 1
done
exec "$@"
'

# The slurm.conf lines every cluster of ours shares (SCRATCH holds munge's
# socket, the plugstack file and the controller's state).
_slurm_common_conf() {
  local scratch=$1
  cat <<EOF
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$scratch/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
PlugStackConfig=$scratch/etc/plugstack.conf
StateSaveLocation=$scratch/state
SlurmctldDebug=info
SlurmdDebug=info
FirstJobId=$((1000 + (RANDOM * 32768 + RANDOM) % 60000000))
ReturnToService=2
InactiveLimit=0
KillWait=5
MinJobAge=300
SlurmctldTimeout=60
MailProg=/bin/true
EOF
}

# munged with its own key and socket in SCRATCH/munge, logs in SCRATCH/log;
# waits until a credential made with it decodes.
_slurm_start_munge() {
  local scratch=$1
  if ! dd if=/dev/urandom of="$scratch/munge/munge.key" bs=1024 count=1 status=none ||
    ! chmod 0400 "$scratch/munge/munge.key"; then
    _slurm_fail "cannot write the munge key"; return 1
  fi
  SLURM_HARNESS_ID=$scratch munged --foreground --force -S "$scratch/munge/munge.socket" \
    --key-file="$scratch/munge/munge.key" --pid-file="$scratch/run/munged.pid" \
    --log-file="$scratch/log/munged.log" --seed-file="$scratch/munge/munged.seed" \
    </dev/null >"$scratch/log/munged.out" 2>&1 &
  SLURM_HARNESS_MUNGED_PID=$!
  for _ in $(seq 100); do
    [ -S "$scratch/munge/munge.socket" ] && munge -S "$scratch/munge/munge.socket" -n 2>/dev/null |
      unmunge -S "$scratch/munge/munge.socket" >/dev/null 2>&1 && break
    _slurm_ours "$SLURM_HARNESS_MUNGED_PID" || break
    sleep 0.1
  done
  munge -S "$scratch/munge/munge.socket" -n 2>/dev/null | unmunge -S "$scratch/munge/munge.socket" >/dev/null 2>&1 ||
    { _slurm_fail "munged did not start"; return 1; }
}

slurm_start() {
  local -; set +e
  local scratch=${1:?usage: slurm_start SCRATCH_DIR [PMIX_LIB_DIR]} libdir=${2:-}
  local host ctld_port slurmd_port state ping
  if [ -n "$SLURM_HARNESS_DIR" ]; then _slurm_say "a cluster is already running in $SLURM_HARNESS_DIR"; return 1; fi
  [ "$(id -u)" = 0 ] || { _slurm_say "must run as root"; return 1; }
  scratch=$(cd "$scratch" && pwd) || return 1
  SLURM_HARNESS_DIR=$scratch
  SLURM_HARNESS_LIB_DIR=
  if [ -n "$libdir" ]; then
    SLURM_HARNESS_LIB_DIR=$(cd "$libdir" && pwd) || { _slurm_fail "no folder $libdir"; return 1; }
  fi
  # the longest socket path: slurmd's per-step socket, spool/<node>_<job>.<step>
  if [ ${#scratch} -gt 60 ]; then _slurm_fail "scratch path $scratch too long for Unix sockets"; return 1; fi
  # a fresh cluster every time: no state of an earlier one in the same folder
  rm -rf "${scratch:?}"/{etc,log,run,state,spool,tmp,munge,pmixlib}
  mkdir -p "$scratch"/{etc,log,run,state,spool,tmp,munge} || return 1
  chmod 0755 "$scratch/munge"   # munged wants its socket folder searchable by all
  if [ -n "$SLURM_HARNESS_LIB_DIR" ]; then
    _slurm_stage_pmix "$SLURM_HARNESS_LIB_DIR" || { _slurm_fail "cannot stage $SLURM_HARNESS_LIB_DIR"; return 1; }
  fi

  # --- munged, its own key and socket
  _slurm_start_munge "$scratch" || return 1

  # --- slurm.conf
  host=$(hostname -s) || { _slurm_fail "no hostname"; return 1; }
  _slurm_lock_ports || { _slurm_fail "cannot take the port lock"; return 1; }
  if ! ctld_port=$(_slurm_free_port) || ! slurmd_port=$(_slurm_free_port "$ctld_port"); then
    _slurm_fail "no free ports"; return 1
  fi
  : >"$scratch/etc/plugstack.conf"   # not /etc/slurm's: it is looked for next to slurm.conf
  # Addresses are given, so nothing depends on `hostname -s` resolving. A
  # random first job id keeps the namespaces (slurm.pmix.<job>.<step>), and
  # with them Open MPI's and OpenPMIx's /dev/shm and /tmp files, of parallel
  # clusters apart.
  cat >"$scratch/etc/slurm.conf" <<EOF
# one-node test cluster written by tests/hosts/slurm/slurm_cluster.sh
ClusterName=h$(printf '%05d' $((RANDOM % 100000)))
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
$(_slurm_common_conf "$scratch")
SlurmdSpoolDir=$scratch/spool
SlurmctldPidFile=$scratch/run/slurmctld.pid
SlurmdPidFile=$scratch/run/slurmd.pid
SlurmctldLogFile=$scratch/log/slurmctld.log
SlurmdLogFile=$scratch/log/slurmd.log
TmpFS=$scratch/tmp
SlurmdTimeout=60
NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host OverSubscribe=FORCE:16 Default=YES State=UP MaxTime=INFINITE
EOF
  export SLURM_CONF=$scratch/etc/slurm.conf

  # --- slurmctld
  SLURM_HARNESS_ID=$scratch slurmctld -D -i -f "$SLURM_CONF" \
    </dev/null >"$scratch/log/slurmctld.out" 2>&1 {SLURM_HARNESS_PORT_LOCK_FD}>&- &
  SLURM_HARNESS_SLURMCTLD_PID=$!

  # --- slurmd, in a mount namespace of its own when a library replaces OpenPMIx
  if [ -n "$SLURM_HARNESS_LIB_DIR" ]; then
    local server_env=()
    if [ -f "$scratch/pmixlib/libpmix-server.so.2" ]; then
      server_env=("PMIX_CXX_SERVER_LIBRARY=$scratch/pmixlib/libpmix-server.so.2")
    fi
    SLURM_HARNESS_ID=$scratch env "${server_env[@]}" \
      unshare -m --propagation private -- bash -c "$_SLURM_NS_SCRIPT" slurmd-ns "$scratch/pmixlib" \
      slurmd -D -f "$SLURM_CONF" -N "$host" \
      </dev/null >"$scratch/log/slurmd.out" 2>&1 {SLURM_HARNESS_PORT_LOCK_FD}>&- &
  else
    SLURM_HARNESS_ID=$scratch slurmd -D -f "$SLURM_CONF" -N "$host" \
      </dev/null >"$scratch/log/slurmd.out" 2>&1 {SLURM_HARNESS_PORT_LOCK_FD}>&- &
  fi
  SLURM_HARNESS_SLURMD_PID=$!   # unshare and bash exec: the same PID ends up slurmd's

  # --- wait for both ports, then for the node to be idle
  for _ in $(seq 600); do
    _slurm_listening "$ctld_port" && _slurm_listening "$slurmd_port" && break
    _slurm_ours "$SLURM_HARNESS_SLURMCTLD_PID" || { _slurm_fail "slurmctld exited"; return 1; }
    _slurm_ours "$SLURM_HARNESS_SLURMD_PID" || { _slurm_fail "slurmd exited"; return 1; }
    sleep 0.1
  done
  _slurm_unlock_ports
  for _ in $(seq 600); do
    _slurm_ours "$SLURM_HARNESS_SLURMCTLD_PID" || { _slurm_fail "slurmctld exited"; return 1; }
    _slurm_ours "$SLURM_HARNESS_SLURMD_PID" || { _slurm_fail "slurmd exited"; return 1; }
    ping=$(timeout 10 scontrol ping 2>/dev/null)
    state=$(timeout 10 sinfo -h -N -o %T 2>/dev/null)
    case "$ping" in *" is UP"*) [ "$state" = idle ] && return 0 ;; esac
    sleep 0.1
  done
  _slurm_fail "the node is not idle after 60 s (scontrol ping: ${ping:-nothing}; sinfo: ${state:-nothing})"
}

# Stop PID: TERM, up to GRACE seconds, then KILL; reap it if it is our child.
_slurm_stop_pid() {
  local pid=$1 name=$2 grace=${3:-10}
  [ -n "$pid" ] || return 0
  if _slurm_ours "$pid"; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq $((grace * 10))); do
      _slurm_ours "$pid" || break
      sleep 0.1
    done
    if _slurm_ours "$pid"; then
      _slurm_say "$name ($pid) ignored TERM for $grace s: KILL"
      kill -KILL "$pid" 2>/dev/null
      for _ in $(seq 50); do _slurm_ours "$pid" || break; sleep 0.1; done
    fi
  fi
  wait "$pid" 2>/dev/null
  return 0
}

slurm_stop() {
  local -; set +e   # errexit of a caller must not cut a cleanup short
  local pid left sig
  [ -n "$SLURM_HARNESS_DIR" ] || return 0
  _slurm_unlock_ports
  # jobs first, while the daemons can still end them cleanly
  if _slurm_ours "$SLURM_HARNESS_SLURMCTLD_PID" && [ -n "$(timeout 10 squeue -h -o %i 2>/dev/null)" ]; then
    timeout 10 scancel --quiet --full --user=root 2>/dev/null
    for _ in $(seq 100); do
      [ -z "$(timeout 10 squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  _slurm_stop_pid "$SLURM_HARNESS_SLURMD_PID" slurmd
  _slurm_stop_pid "$SLURM_HARNESS_SLURMCTLD_PID" slurmctld
  _slurm_stop_pid "$SLURM_HARNESS_MUNGED_PID" munged
  # whatever else is left of the cluster: slurmstepd, tasks, an srun
  for sig in TERM KILL KILL; do
    left=$(_slurm_members)
    [ -n "$left" ] || break
    _slurm_say "$sig to processes left behind:$(for pid in $left; do printf ' %s(%s)' "$pid" "$(cat "/proc/$pid/comm" 2>/dev/null)"; done)"
    # shellcheck disable=SC2086  # a list of PIDs
    kill -"$sig" $left 2>/dev/null
    for _ in $(seq 20); do [ -z "$(_slurm_members)" ] && break; sleep 0.1; done
  done
  SLURM_HARNESS_MUNGED_PID='' SLURM_HARNESS_SLURMCTLD_PID='' SLURM_HARNESS_SLURMD_PID=''
  SLURM_HARNESS_DIR='' SLURM_HARNESS_LIB_DIR=
  return 0
}

# srun -O --mpi=pmix ARGS, in slurmd's mount namespace when a library replaces
# OpenPMIx (srun loads the plugin, and with it libpmix, too). Tasks get
# TMPDIR in the scratch folder and Open MPI's yield-when-idle (the job is
# oversubscribed).
slurm_srun() {
  local -; set +e
  [ -n "$SLURM_HARNESS_DIR" ] || { _slurm_say "slurm_srun: no cluster running"; return 1; }
  local cmd=(srun -O --mpi=pmix "$@")
  if [ -n "$SLURM_HARNESS_LIB_DIR" ]; then
    cmd=(nsenter "--mount=/proc/$SLURM_HARNESS_SLURMD_PID/ns/mnt" "--wd=$PWD" -- "${cmd[@]}")
  fi
  SLURM_HARNESS_ID=$SLURM_HARNESS_DIR SLURM_CONF=$SLURM_HARNESS_DIR/etc/slurm.conf TMPDIR=$SLURM_HARNESS_DIR/tmp \
    OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1} \
    timeout -k 10 "${SLURM_SRUN_TIMEOUT:-120}" "${cmd[@]}"
}
