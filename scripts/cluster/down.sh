#!/bin/sh
# down.sh [DIR]: tears down the cluster that up.sh started in DIR (default
# /tmp/popmon-cluster), also after a partial or failed up.sh: ends every
# process still running on its nodes (found by their namespaces) and the
# holders, which frees the namespaces, and with them the bridge, the links and
# the nodes' mounts. It removes the state files and keeps DIR/node*/local
# (node-local data: rm -r DIR to remove it). Needs root.
set -eu
prog=down.sh
here=$(cd "$(dirname "$0")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

[ $# -le 1 ] || {
	echo "usage: $prog [DIR]" >&2
	exit 2
}
dir=${1:-/tmp/popmon-cluster}
if [ ! -d "$dir" ]; then
	echo "$prog: no cluster in $dir"
	exit 0
fi
need_root

ournet=$(nsid $$ net)
ourmnt=$(nsid $$ mnt)
holders="" # PIDs of the live holders
ids=""     # their network and mount namespaces, e.g. "net:[4026532301]"
for pidfile in "$dir/switch.pid" "$dir"/node*/pid; do
	[ -f "$pidfile" ] || continue
	holder "$pidfile"
	hp=$holder_pid
	[ -n "$hp" ] || continue
	holders="$holders $hp"
	# Never look for processes in our own namespaces: that would end all.
	for id in "$(nsid "$hp" net)" "$(nsid "$hp" mnt)"; do
		if [ -n "$id" ] && [ "$id" != "$ournet" ] && [ "$id" != "$ourmnt" ]; then
			ids="$ids $id"
		fi
	done
done

# Every process in those namespaces (one pass over /proc), then the holders:
# "PID:STARTTIME", so that a reused PID is never signalled.
victims=""
if [ -n "$ids" ]; then
	for p in $(find /proc/[0-9]*/ns/net /proc/[0-9]*/ns/mnt -maxdepth 0 -printf '%p %l\n' 2>/dev/null |
		awk -v ids="$ids" -v self=$$ '
			BEGIN { n = split(ids, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
			want[$2] { split($1, f, "/"); if (f[3] != self) print f[3] }' | sort -un); do
		case " $holders " in *" $p "*) continue ;; esac
		procstat "$p"
		[ -z "$ps_start" ] || victims="$victims $p:$ps_start"
	done
fi
for hp in $holders; do
	procstat "$hp"
	victims="$victims $hp:$ps_start"
done

# alive PID:STARTTIME: the same process still runs.
alive() {
	procstat "${1%%:*}"
	[ "$ps_start" = "${1#*:}" ] && [ "$ps_state" != Z ]
}

# signal SIG: sends SIG to the victims still running; true when any was.
signal() {
	any=1
	for v in $victims; do
		if alive "$v"; then
			kill "-$1" "${v%%:*}" 2>/dev/null || true
			any=0
		fi
	done
	return "$any"
}

if signal TERM; then
	i=0
	while [ "$i" -lt 50 ]; do
		sleep 0.1
		left=0
		for v in $victims; do
			if alive "$v"; then left=1; fi
		done
		[ "$left" = 1 ] || break
		i=$((i + 1))
	done
	if signal KILL; then
		sleep 0.2
	fi
fi

rm -f "$dir/cluster" "$dir/on" "$dir/on.tmp" "$dir/hosts" "$dir/switch.pid" "$dir"/node*/pid
echo "$prog: the cluster in $dir is down"
