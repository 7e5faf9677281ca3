#!/bin/sh
# up.sh N [DIR]: starts a cluster of N simulated nodes, node0 .. node(N-1), on
# this machine, its state in DIR (default /tmp/popmon-cluster). Needs root.
#
# Each node has its own network namespace (eth0 with 10.77.0.(10+k)/24 on a
# bridge that lives in the cluster's own "switch" namespace, and lo), UTS
# namespace (hostname nodeK), IPC namespace and mount namespace (a private
# /dev/shm, /etc/hosts listing every node, DIR/nodeK/local mounted at
# /var/tmp/popmon-node); the rest of the file system is shared, as on a
# cluster. Nothing is added to this machine's own network namespace.
#
# A holder process per namespace set keeps the namespaces alive after up.sh
# returns; down.sh DIR ends them. With CLUSTER_LIFELINE=3 the holders instead
# read file descriptor 3 and end when it reaches end of file, that is, when
# every process holding its write end has exited: a test passes a pipe so that
# the cluster disappears with the test process however it ends.
#
# DIR/on is the ssh stand-in for this cluster: DIR/on NODE COMMAND...
# Running up.sh again with the same N and DIR does nothing when the cluster is
# up; with another N it replaces the cluster. Exit status 77: namespaces cannot
# be created here (not an error of the script: tests skip).
set -eu
prog=up.sh
here=$(cd "$(dirname "$0")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

usage() {
	echo "usage: $prog N [DIR]   (1 <= N <= 200; DIR defaults to /tmp/popmon-cluster)" >&2
	exit 2
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
n=$1
case $n in '' | *[!0-9]*) usage ;; esac
if [ "$n" -lt 1 ] || [ "$n" -gt 200 ]; then usage; fi
dir=${2:-/tmp/popmon-cluster}

need_root
for c in unshare nsenter ip timeout mount hostname; do
	command -v "$c" >/dev/null 2>&1 || cannot "the command $c is missing (Debian: apt-get install util-linux iproute2 hostname coreutils)"
done
case ${CLUSTER_LIFELINE:-} in
'' | 3) ;;
*) die "CLUSTER_LIFELINE must be 3 (the file descriptor the holders read) or unset" ;;
esac

mkdir -p "$dir"
dir=$(cd "$dir" && pwd -P)
# The path goes into DIR/on and into Open MPI's plm_rsh_agent, which splits
# on spaces: keep it plain.
case $dir$here in *[!A-Za-z0-9._/+-]*) die "the paths $dir and $here must contain only letters, digits and . _ / + -" ;; esac

# Already up with the same size: nothing to do.
if [ -f "$dir/cluster" ]; then
	up=$(sed -n 's/^nodes=//p' "$dir/cluster")
	alive=0
	holder "$dir/switch.pid"
	if [ "$up" = "$n" ] && [ -n "$holder_pid" ]; then
		alive=1
		k=0
		while [ "$k" -lt "$n" ]; do
			holder "$dir/node$k/pid"
			[ -n "$holder_pid" ] || alive=0
			k=$((k + 1))
		done
	fi
	if [ "$alive" = 1 ]; then
		echo "$prog: the cluster of $n nodes in $dir is already up"
		exit 0
	fi
fi
# Anything left over (another size, a partial up, dead holders) goes first.
"$here/down.sh" "$dir" >/dev/null

# The node-local directory's mount point: a real directory owned by root
# (never a symlink someone else planted: the bind mount would follow it).
if [ ! -e "$NODE_LOCAL" ] && [ ! -L "$NODE_LOCAL" ]; then
	mkdir -m 0755 "$NODE_LOCAL"
fi
if [ -L "$NODE_LOCAL" ] || [ ! -d "$NODE_LOCAL" ] || [ "$(stat -c %u "$NODE_LOCAL")" != 0 ]; then
	die "$NODE_LOCAL must be a directory owned by root (it is the node-local mount point); remove it"
fi

done_ok=0
cleanup() {
	rc=$?
	if [ "$done_ok" != 1 ]; then
		"$here/down.sh" "$dir" >/dev/null 2>&1 || true
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_holder PIDFILE UNSHARE-OPTIONS...: starts a process in new
# namespaces, records it, waits until it runs inside them and sets
# started_pid.
start_holder() {
	pidfile=$1
	shift
	if [ -n "${CLUSTER_LIFELINE:-}" ]; then
		unshare "$@" -- cat <&3 >/dev/null 2>&1 &
	else
		unshare "$@" -- sleep infinity </dev/null >/dev/null 2>&1 3<&- &
	fi
	started_pid=$!
	# The start time identifies the process for down.sh (PIDs are reused).
	i=0
	while :; do
		procstat "$started_pid"
		if [ -z "$ps_start" ] || [ "$ps_state" = Z ]; then
			cannot "unshare $* failed (run it by hand to see why)"
		fi
		echo "$started_pid $ps_start" >"$pidfile"
		# Inside its namespaces once unshare has executed the holder.
		comm=""
		{ read -r comm <"/proc/$started_pid/comm"; } 2>/dev/null || true
		case $comm in
		cat | sleep)
			[ "$(nsid "$started_pid" net)" != "$(nsid $$ net)" ] && break
			;;
		esac
		i=$((i + 1))
		[ "$i" -lt 1000 ] || die "the holder $started_pid did not enter its namespaces within 10 s"
		sleep 0.01
	done
}

# The switch: a network namespace with a bridge, no address.
start_holder "$dir/switch.pid" --net
sw=$started_pid
# A kernel without bridges or veth pairs (a missing module in a container)
# cannot hold a cluster: the tests skip, as when unshare is refused.
t nsenter --target "$sw" --net ip link add br0 type bridge ||
	cannot "ip link add type bridge failed (no bridge support in this kernel?)"
t nsenter --target "$sw" --net ip link set br0 up

# /etc/hosts of every node.
{
	echo "127.0.0.1 localhost"
	echo "::1 localhost ip6-localhost ip6-loopback"
	k=0
	while [ "$k" -lt "$n" ]; do
		echo "$CLUSTER_NET.$((10 + k)) node$k"
		k=$((k + 1))
	done
} >"$dir/hosts"
chmod 0644 "$dir/hosts"

k=0
while [ "$k" -lt "$n" ]; do
	node=node$k
	addr=$CLUSTER_NET.$((10 + k))
	mkdir -p "$dir/$node/local"
	start_holder "$dir/$node/pid" --net --uts --ipc --mount --propagation private
	pid=$started_pid
	# Network: eth0 (its peer n$k on the switch's bridge) and lo; no IPv6,
	# so that MPI libraries see one address per node.
	t nsenter --target "$sw" --net ip link add "n$k" type veth peer name eth0 netns "$pid" ||
		cannot "ip link add type veth failed (no veth support in this kernel?)"
	t nsenter --target "$sw" --net ip link set "n$k" master br0 up
	# shellcheck disable=SC2016
	t nsenter --target "$pid" --net sh -c '
		echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6 2>/dev/null || true
		echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6 2>/dev/null || true
		ip link set lo up &&
		ip addr add "$1/24" dev eth0 &&
		ip link set eth0 up' sh "$addr"
	t nsenter --target "$pid" --uts hostname "$node"
	# Mounts exist only in the node's mount namespace (private propagation).
	# shellcheck disable=SC2016
	t nsenter --target "$pid" --mount sh -c '
		mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm &&
		mount --bind "$1" /etc/hosts &&
		mount --bind "$2" "$3"' sh "$dir/hosts" "$dir/$node/local" "$NODE_LOCAL"
	k=$((k + 1))
done

# The ssh stand-in bound to this cluster.
cat >"$dir/on.tmp" <<EOF
#!/bin/sh
# ssh stand-in for the cluster in $dir (written by up.sh): on NODE COMMAND...
POPMON_CLUSTER_DIR=$dir exec $here/on "\$@"
EOF
chmod 0755 "$dir/on.tmp"
mv "$dir/on.tmp" "$dir/on"

echo "nodes=$n" >"$dir/cluster"
done_ok=1
echo "$prog: $n nodes up in $dir (node0 .. node$((n - 1)), $CLUSTER_NET.10 .. $CLUSTER_NET.$((9 + n)); run commands with $dir/on NODE COMMAND...)"
