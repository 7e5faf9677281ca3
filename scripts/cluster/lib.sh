# shellcheck shell=sh
# Common functions of up.sh, down.sh and on (sourced, not run; they set prog).
# shellcheck disable=SC2034,SC2154

# Addresses: node k is $CLUSTER_NET.$((10 + k)) on a /24 that exists only
# inside the cluster's own network namespaces.
CLUSTER_NET=10.77.0
# The node-local directory, at the same path on every node.
NODE_LOCAL=/var/tmp/popmon-node
# Longest wait for one setup command (ip, mount, nsenter...).
CMD_TIMEOUT=${CLUSTER_CMD_TIMEOUT:-20}

# Exit status that means "namespaces cannot be created here" (tests skip).
EX_CANNOT=77

die() {
	echo "$prog: $*" >&2
	exit 1
}

cannot() {
	echo "$prog: cannot create a cluster here: $*" >&2
	exit "$EX_CANNOT"
}

need_root() {
	[ "$(id -u)" = 0 ] || die "needs root (it creates network, UTS, IPC and mount namespaces); run it as root or with sudo"
}

# t CMD...: CMD under a timeout.
t() {
	timeout "$CMD_TIMEOUT" "$@"
}

# procstat PID: sets ps_state (R, S, Z...) and ps_start (the start time,
# field 22 of /proc/PID/stat) of the process, both empty when there is none.
# Builtins only: forks are slow on small virtual machines.
procstat() {
	ps_state=""
	ps_start=""
	ps_line=""
	{ read -r ps_line <"/proc/$1/stat"; } 2>/dev/null || true
	# The command name (field 2) may contain spaces: cut after its ')'.
	ps_line=${ps_line##*) }
	set -f
	# shellcheck disable=SC2086
	set -- $ps_line
	set +f
	[ $# -ge 20 ] || return 0
	ps_state=$1
	shift 19
	ps_start=$1
}

# holder FILE: sets holder_pid to the PID recorded in FILE ("PID STARTTIME")
# when that process still runs (same start time, not a zombie), else to "".
holder() {
	holder_pid=""
	h_pid=""
	h_start=""
	{ read -r h_pid h_start <"$1"; } 2>/dev/null || true
	case $h_pid in '' | *[!0-9]*) return 0 ;; esac
	procstat "$h_pid"
	if [ -n "$ps_start" ] && [ "$ps_start" = "$h_start" ] && [ "$ps_state" != Z ]; then
		holder_pid=$h_pid
	fi
}

# nsid PID KIND: the namespace identity, e.g. "net:[4026532301]".
nsid() {
	readlink "/proc/$1/ns/$2" 2>/dev/null || true
}
