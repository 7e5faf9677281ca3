#!/bin/sh
# slurm-down.sh DIR: stops the Slurm that slurm-up.sh started on the cluster
# in DIR (its daemons and any job step still running) and keeps the cluster
# and DIR/slurm's logs. Needs root.
set -eu
prog=slurm-down.sh
here=$(cd "$(dirname "$0")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

[ $# -eq 1 ] || {
	echo "usage: $prog DIR" >&2
	exit 2
}
dir=$1
sl=$dir/slurm
[ -d "$sl" ] || exit 0
need_root
rm -f "$sl/up"
# stop FILE: SIGTERM, then SIGKILL, to the process whose PID FILE holds,
# when it is a Slurm daemon or step (never another process with a reused PID).
stop() {
	p=""
	{ read -r p <"$1"; } 2>/dev/null || true
	case $p in '' | *[!0-9]*) return 0 ;; esac
	comm=""
	{ read -r comm <"/proc/$p/comm"; } 2>/dev/null || true
	case $comm in slurm*) ;; *) return 0 ;; esac
	kill -TERM "$p" 2>/dev/null || true
	i=0
	procstat "$p"
	while [ -n "$ps_start" ] && [ "$ps_state" != Z ] && [ "$i" -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
		procstat "$p"
	done
	[ -z "$ps_start" ] || [ "$ps_state" = Z ] || kill -KILL "$p" 2>/dev/null || true
}
for f in "$sl"/slurmd-*.pid "$sl/slurmctld.pid"; do
	[ -f "$f" ] && stop "$f"
	rm -f "$f"
done
# Steps (slurmstepd) outlive slurmd: end those of this cluster, found by
# their command line naming this spool.
for p in $(pgrep -f "^slurmstepd" 2>/dev/null || true); do
	if grep -qs "$sl/spool" "/proc/$p/environ" "/proc/$p/cmdline" 2>/dev/null; then
		kill -KILL "$p" 2>/dev/null || true
	fi
done
w=""
{ read -r w <"$sl/watcher.pid"; } 2>/dev/null || true
# The watcher leads its own process group (setsid): end it and its cat.
case $w in '' | *[!0-9]*) ;; *) kill -- "-$w" 2>/dev/null || true ;; esac
rm -f "$sl/watcher.pid" "$sl/state"/* 2>/dev/null || true
echo "$prog: Slurm in $sl is down"
