#!/bin/sh
# slurm-watch.sh DIR NETNS...: the watcher slurm-up.sh starts with
# CLUSTER_LIFELINE=3 (not meant to be run by hand). It reads file descriptor
# 3 until end of file (every holder of the pipe's write end, the test binary,
# has exited), then ends every process in the nodes' network namespaces
# NETNS ("net:[4026532301]", recorded by slurm-up.sh): Slurm's daemons, job
# steps and the programs they started. Those processes keep the namespaces
# alive, so the identities still name the cluster's when they are found;
# each is then signalled by PID and start time only (SIGTERM, SIGKILL 2 s
# later), never by namespace again, since a freed namespace's number can be
# given to another. Last it runs down.sh DIR.
set -u
prog=slurm-watch.sh
here=$(cd "$(dirname "$0")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

dir=$1
shift
cat <&3 >/dev/null 2>&1
exec 3<&-
victims=""
for p in $(find /proc/[0-9]*/ns/net -maxdepth 0 -printf '%p %l\n' 2>/dev/null |
	awk -v ids="$*" -v self=$$ '
		BEGIN { n = split(ids, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
		want[$2] { split($1, f, "/"); if (f[3] != self) print f[3] }'); do
	procstat "$p"
	[ -z "$ps_start" ] || victims="$victims $p:$ps_start"
done
for sig in TERM KILL; do
	for v in $victims; do
		procstat "${v%%:*}"
		if [ "$ps_start" = "${v#*:}" ] && [ "$ps_state" != Z ]; then
			kill "-$sig" "${v%%:*}" 2>/dev/null || true
		fi
	done
	[ "$sig" = KILL ] || sleep 2
done
exec "$here/down.sh" "$dir" >/dev/null 2>&1
