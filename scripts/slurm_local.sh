#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, to test the workflow's SLURM profile for real
# (profiles/slurm-local, tests/workflow/test_slurm.py). It installs nothing: install Debian's packages first,
#   apt-get install -y --no-install-recommends slurm-wlm munge
#
# usage: scripts/slurm_local.sh start|stop|status        (start and stop need root)
#
# Why by hand: containers and CI machines have no systemd, so the daemons are started directly
# (munged as user munge, slurmctld dropping to SlurmUser=slurm, slurmd as root) in daemon mode.
# Each daemon's PID and process name are recorded under $TVBO_SLURM_STATE (default
# /var/tmp/tvbo-slurm), and `stop` signals ONLY those recorded processes -- after checking that
# the PID still runs the recorded program -- so it never touches a SLURM or munge it did not
# start. The job state, spool and logs live in the same directory; /etc/slurm/slurm.conf is
# written (it is where every SLURM client looks) only if absent or written by this script, and
# `stop` removes it again: a client configuration naming a controller that is not running makes
# every `scontrol`/`sinfo` call wait ~9 s for it, and Snakemake's SLURM executor plugin runs
# `scontrol show config` whenever Snakemake starts, so a left-over file made every later
# `snakemake` on the machine 9 s slower (10.4 s instead of 1.6 s for a dry run).
#
# The node is `hostname -s` at 127.0.0.1 with `nproc` CPUs and half the RAM, in partition
# `debug`. Accounting is disabled (no slurmdbd), so `sacct` does not work: Snakemake's SLURM
# executor must use `slurm-status-command: squeue`, which needs finished jobs to stay visible
# for a while (MinJobAge=300 s).
set -euo pipefail

STATE=${TVBO_SLURM_STATE:-/var/tmp/tvbo-slurm}
CONF=/etc/slurm/slurm.conf
MARKER="# Written by tvbo scripts/slurm_local.sh"
MUNGE_PIDFILE=/run/munge/munged.pid
DAEMONS=(slurmd slurmctld munged)  # stop order; start order is the reverse
START_TIMEOUT=${TVBO_SLURM_START_TIMEOUT:-30}

say() { echo "slurm_local: $*"; }
die() { echo "slurm_local: ERROR: $*" >&2; exit 1; }

need_root() {
  [ "$(id -u)" -eq 0 ] || die "'$1' needs root (the daemons run as root, munge and slurm)"
}

need_commands() {
  local missing=() cmd
  for cmd in munged munge unmunge slurmctld slurmd sinfo squeue scancel; do
    command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing+=("$cmd")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    die "not installed: ${missing[*]} (apt-get install -y --no-install-recommends slurm-wlm munge)"
  fi
}

# --- the PID records: $STATE/pids/<daemon> holds "<pid> <comm>" --------------------------------

recorded_pid() {  # prints the PID if the recorded process is alive and still the same program
  local file="$STATE/pids/$1" pid comm
  [ -f "$file" ] || return 1
  read -r pid comm <"$file" || return 1
  [ -n "${pid:-}" ] && [ -r "/proc/$pid/comm" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 1
  echo "$pid"
}

record_pid() {  # record_pid <daemon> <pidfile written by the daemon>
  local daemon=$1 pidfile=$2 pid="" i
  for i in $(seq 1 50); do  # daemons write the pidfile right after forking
    if [ -s "$pidfile" ]; then
      pid=$(tr -dc '0-9' <"$pidfile")
      [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && break
    fi
    sleep 0.1
  done
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] || return 1
  echo "$pid $(cat "/proc/$pid/comm")" >"$STATE/pids/$daemon"
  say "started $daemon (pid $pid)"
}

show_logs() {
  local log
  for log in "$STATE"/log/*.log; do
    [ -f "$log" ] || continue
    echo "--- last lines of $log" >&2
    tail -n 15 "$log" >&2
  done
}

cluster_answers() {  # the controller answers and lists at least one usable node
  sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated|completing)'
}

# --- start ---------------------------------------------------------------------------------------

write_conf() {
  local host cpus mem_mb
  host=$(hostname -s)
  cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # GNU nproc obeys OMP_NUM_THREADS
  mem_mb=$(awk '/^MemTotal:/ {print int($2 / 1024 / 2)}' /proc/meminfo)
  if [ -e "$CONF" ] && ! grep -qF "$MARKER" "$CONF"; then
    die "$CONF exists and was not written by this script; refusing to overwrite a real cluster's configuration"
  fi
  getent hosts "$host" >/dev/null || say "warning: '$host' does not resolve; using NodeAddr=127.0.0.1 anyway"
  mkdir -p "$(dirname "$CONF")"
  cat >"$CONF" <<EOF
$MARKER (single-node test cluster; rewritten on every start).
ClusterName=tvbolocal
SlurmctldHost=$host(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
MinJobAge=300
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
SlurmdSpoolDir=$STATE/spool/slurmd
StateSaveLocation=$STATE/spool/slurmctld
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  say "wrote $CONF (node $host, $cpus CPUs, ${mem_mb} MB, partition debug)"
}

start_munged() {
  if recorded_pid munged >/dev/null; then
    say "munged already running (pid $(recorded_pid munged))"
    return
  fi
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "a munged not started by this script answers; using it and leaving it alone"
    return
  fi
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile /etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
    chmod 0600 /etc/munge/munge.key
    say "created /etc/munge/munge.key"
  fi
  mkdir -p /run/munge
  chown munge:munge /run/munge
  chmod 0755 /run/munge
  rm -f "$MUNGE_PIDFILE"
  runuser -u munge -- "$(command -v munged || echo /usr/sbin/munged)" \
    || die "munged failed to start (see /var/log/munge/munged.log)"
  record_pid munged "$MUNGE_PIDFILE" || die "munged did not write $MUNGE_PIDFILE"
  local i
  for i in $(seq 1 50); do
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return
    sleep 0.1
  done
  die "munged runs but 'munge -n | unmunge' fails"
}

start_slurm_daemon() {  # start_slurm_daemon <slurmctld|slurmd> <args...>
  local daemon=$1
  shift
  if recorded_pid "$daemon" >/dev/null; then
    say "$daemon already running (pid $(recorded_pid "$daemon"))"
    return
  fi
  rm -f "$STATE/run/$daemon.pid"
  "$(command -v "$daemon" || echo "/usr/sbin/$daemon")" "$@" || { show_logs; die "$daemon failed to start"; }
  record_pid "$daemon" "$STATE/run/$daemon.pid" || { show_logs; die "$daemon exited right after starting"; }
}

cmd_start() {
  need_root start
  need_commands
  mkdir -p "$STATE/pids" "$STATE/run" "$STATE/log" "$STATE/spool/slurmctld" "$STATE/spool/slurmd"
  chmod 0755 "$STATE"
  chown slurm:slurm "$STATE/run" "$STATE/log" "$STATE/spool/slurmctld"
  local ctld=0 slurmd=0
  recorded_pid slurmctld >/dev/null && ctld=1
  recorded_pid slurmd >/dev/null && slurmd=1
  # (pgrep only detects: a controller nobody recorded is someone else's and is left alone)
  if [ "$ctld$slurmd" = "00" ] && pgrep -x slurmctld >/dev/null && cluster_answers; then
    say "a SLURM cluster not started by this script already answers; using it and leaving it alone"
    sinfo
    return
  fi
  if [ "$ctld$slurmd" = "00" ]; then
    write_conf  # never under running daemons of ours: they read it at start
  fi
  start_munged
  # -c: start from an empty job state, so a test never inherits jobs of an earlier session
  start_slurm_daemon slurmctld -c
  start_slurm_daemon slurmd
  local waited=0
  until cluster_answers; do
    if [ "$waited" -ge "$START_TIMEOUT" ]; then
      sinfo -N -l >&2 || true
      show_logs
      die "the node did not become idle within ${START_TIMEOUT}s"
    fi
    sleep 1
    waited=$((waited + 1))
  done
  say "cluster up after ${waited}s:"
  sinfo
}

# --- stop ----------------------------------------------------------------------------------------

cancel_jobs() {
  # Jobs of this cluster only (it is ours): their processes must not outlive slurmd.
  local jobs i
  jobs=$(squeue -h -o '%i' 2>/dev/null || true)
  [ -n "$jobs" ] || return 0
  say "cancelling jobs: $(echo "$jobs" | tr '\n' ' ')"
  # shellcheck disable=SC2086
  scancel $jobs || true
  for i in $(seq 1 20); do
    [ -z "$(squeue -h -t RUNNING,COMPLETING -o '%i' 2>/dev/null)" ] && return 0
    sleep 0.5
  done
  say "warning: jobs still running after 10 s"
}

stop_daemon() {
  local daemon=$1 pid i
  if ! pid=$(recorded_pid "$daemon"); then
    [ -f "$STATE/pids/$daemon" ] && say "$daemon: recorded process is gone"
    rm -f "$STATE/pids/$daemon"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do
    recorded_pid "$daemon" >/dev/null || break
    sleep 0.1
  done
  if recorded_pid "$daemon" >/dev/null; then
    say "$daemon (pid $pid) ignored SIGTERM for 10 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$STATE/pids/$daemon"
  say "stopped $daemon (pid $pid)"
}

remove_conf() {  # only the file this script wrote (its marker line), never a real cluster's
  if [ -f "$CONF" ] && grep -qF "$MARKER" "$CONF"; then
    rm -f "$CONF"
    say "removed $CONF"
  fi
}

cmd_stop() {
  need_root stop
  local any=0 daemon
  for daemon in "${DAEMONS[@]}"; do
    recorded_pid "$daemon" >/dev/null && any=1
  done
  if [ "$any" -eq 0 ]; then
    say "nothing to stop: no running daemon recorded in $STATE/pids"
    rm -f "$STATE"/pids/* 2>/dev/null || true
    remove_conf
    return 0
  fi
  if recorded_pid slurmctld >/dev/null; then
    cancel_jobs
  fi
  for daemon in "${DAEMONS[@]}"; do
    stop_daemon "$daemon"
  done
  remove_conf
}

# --- status --------------------------------------------------------------------------------------

cmd_status() {
  local daemon pid
  for daemon in munged slurmctld slurmd; do
    if pid=$(recorded_pid "$daemon"); then
      say "$daemon running (pid $pid, started by this script)"
    else
      say "$daemon not running from this script"
    fi
  done
  # (without any slurmctld process, sinfo would only retry for ~10 s before failing)
  if command -v sinfo >/dev/null 2>&1 && pgrep -x slurmctld >/dev/null && cluster_answers; then
    sinfo
    return 0
  fi
  say "no SLURM cluster answers"
  return 1
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
