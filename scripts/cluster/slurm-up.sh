#!/bin/sh
# slurm-up.sh DIR: starts Slurm on the cluster that up.sh started in DIR:
# slurmctld on node0 and one slurmd per node (NodeName=nodeK, its address),
# each inside its node's namespaces. Needs root and Debian's slurm-wlm
# (22.05). Everything Slurm keeps lives in DIR/slurm: slurm.conf, the state,
# the spool folders, the logs, the PID files. Commands use it through
# SLURM_CONF=DIR/slurm/slurm.conf and run on a node (DIR/on node0 srun ...),
# since the controller's address exists only inside the cluster's network.
#
# Authentication is auth/none and cred/none (no munge), the ports are the
# cluster's own (16817, 16818, srun 16900-16999), and nothing is written
# outside DIR/slurm: a system Slurm on this machine is neither read nor
# disturbed. The daemons run as root (SlurmUser=root) with
# proctrack/linuxproc and task/none (no cgroups needed).
#
# With CLUSTER_LIFELINE=3 a watcher reads file descriptor 3 and, at end of
# file, runs down.sh DIR, which ends every process in the nodes' namespaces
# (the daemons and any job step): a test that is killed leaves nothing
# running. slurm-down.sh DIR stops Slurm and keeps the cluster. Running
# slurm-up.sh again when Slurm is up does nothing. Exit status 77: Slurm is
# not installed (tests skip).
set -eu
prog=slurm-up.sh
here=$(cd "$(dirname "$0")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

[ $# -eq 1 ] || {
	echo "usage: $prog DIR   (DIR: a cluster started by up.sh)" >&2
	exit 2
}
dir=$(cd "$1" && pwd -P)
need_root
for c in slurmctld slurmd srun sinfo scontrol; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "$prog: Slurm is not installed here: the command $c is missing (Debian: apt-get install slurm-wlm)" >&2
		exit "$EX_CANNOT"
	fi
done
[ -f "$dir/cluster" ] || die "no cluster in $dir (run up.sh N $dir first)"
n=$(sed -n 's/^nodes=//p' "$dir/cluster")
sl=$dir/slurm
conf=$sl/slurm.conf

# nodepid K: sets pid to node K's holder, whose namespaces are the node's
# (commands enter them with nsenter, not ip netns exec, which would remount
# /sys and hide /sys/fs/cgroup).
nodepid() {
	holder "$dir/node$1/pid"
	[ -n "$holder_pid" ] || die "node$1 is not running"
	pid=$holder_pid
}

# up: the controller answers and every node is idle.
up() {
	nodepid 0
	out=$(t nsenter --target "$pid" --net --uts --ipc --mount -- env SLURM_CONF="$conf" sinfo -h -N -o '%N %t' 2>/dev/null) || return 1
	[ "$(echo "$out" | grep -c ' idle$')" = "$n" ]
}

if [ -f "$sl/up" ] && up; then
	echo "$prog: Slurm is already up in $sl"
	exit 0
fi
"$here/slurm-down.sh" "$dir" >/dev/null
# A fresh start: job ids begin again at 1, so a previous run's state, spool
# (its steps' sockets, named by job and step) and PMIx folders must go.
rm -rf "$sl/state" "$sl/spool"
k=0
while [ "$k" -lt "$n" ]; do
	rm -rf "$dir/node$k/local/slurm-pmix"
	k=$((k + 1))
done

mkdir -p "$sl/state" "$sl/log"
nodes=""
k=0
while [ "$k" -lt "$n" ]; do
	mkdir -p "$sl/spool/node$k"
	nodes="${nodes}NodeName=node$k NodeAddr=$CLUSTER_NET.$((10 + k)) CPUs=2 RealMemory=1000 State=UNKNOWN
"
	k=$((k + 1))
done
cat >"$conf" <<CONF
# Written by scripts/cluster/slurm-up.sh for the simulated cluster in $dir.
ClusterName=popmon
SlurmctldHost=node0($CLUSTER_NET.10)
SlurmctldPort=16817
SlurmdPort=16818
SrunPortRange=16900-16999
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$sl/state
SlurmdSpoolDir=$sl/spool/%n
SlurmctldPidFile=$sl/slurmctld.pid
SlurmdPidFile=$sl/slurmd-%n.pid
SlurmctldLogFile=$sl/log/slurmctld.log
SlurmdLogFile=$sl/log/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
KillWait=5
InactiveLimit=0
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
$nodes
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF

# PMIx's client folders are named after the job and step only
# (/tmp/spmix_appdir_UID_JOB.STEP by default): on a shared /tmp the second
# node's step finds the first's and fails. They go to the node-local folder.
cat >"$sl/mpi.conf" <<CONF
PMIxCliTmpDirBase=$NODE_LOCAL/slurm-pmix
CONF
k=0
while [ "$k" -lt "$n" ]; do
	mkdir -p "$dir/node$k/local/slurm-pmix"
	k=$((k + 1))
done

# The watcher (slurm-watch.sh): at the lifeline's end of file it ends every
# process in the nodes' network namespaces (daemons, steps, the programs they
# started), then runs down.sh. The namespaces are recorded now: the node
# holders end at that same moment, after which down.sh could no longer find
# them.
if [ "${CLUSTER_LIFELINE:-}" = 3 ]; then
	ids=""
	k=0
	while [ "$k" -lt "$n" ]; do
		nodepid "$k"
		ids="$ids $(nsid "$pid" net)"
		k=$((k + 1))
	done
	set -f # the identities contain brackets
	# shellcheck disable=SC2086
	setsid "$here/slurm-watch.sh" "$dir" $ids </dev/null >/dev/null 2>&1 &
	set +f
	echo "$!" >"$sl/watcher.pid"
fi

fail() {
	"$here/slurm-down.sh" "$dir" >/dev/null 2>&1 || true
	echo "$prog: $*" >&2
	for f in "$sl"/log/*.log; do
		[ -f "$f" ] || continue
		echo "--- $f (last lines)" >&2
		tail -n 15 "$f" >&2
	done
	exit 1
}

# The daemons in the background (-D keeps them in the foreground of their
# nsenter, so that they never leave the node's namespaces), stdin closed,
# fd 3 closed so that they do not hold the lifeline.
nodepid 0
nsenter --target "$pid" --net --uts --ipc --mount -- env SLURM_CONF="$conf" slurmctld -D -i </dev/null >>"$sl/log/slurmctld.out" 2>&1 3<&- &
k=0
while [ "$k" -lt "$n" ]; do
	nodepid "$k"
	nsenter --target "$pid" --net --uts --ipc --mount -- env SLURM_CONF="$conf" slurmd -D -N "node$k" </dev/null >>"$sl/log/slurmd-node$k.out" 2>&1 3<&- &
	k=$((k + 1))
done

i=0
until up; do
	i=$((i + 1))
	[ "$i" -lt 60 ] || fail "Slurm did not come up within 30 s"
	sleep 0.5
done
touch "$sl/up"
echo "$prog: Slurm up in $sl (slurmctld on node0, slurmd on node0 .. node$((n - 1)); use SLURM_CONF=$conf on a node)"
