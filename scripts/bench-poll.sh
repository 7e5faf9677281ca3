#!/bin/bash
# bench-poll.sh [POPMON [BASE]]: what libpopmon adds to a polling call that completes nothing, against
# the two-rdtsc floor (what popmon's entry and exit read the clock for), side by side with the plain
# program in one run: bench/mpipoll.c (1 rank, 4 non-blocking receives pending that nothing matches
# during the loops; N calls each of MPI_Comm_rank, MPI_Test, MPI_Testany, MPI_Testsome, MPI_Testall,
# MPI_Request_get_status, MPI_Iprobe, MPI_Improbe), plain and under libpopmon alternating, ROUNDS
# rounds (default 7), medians, per MPI. With BASE (a commit), the library built from BASE runs in the
# same rounds too and its added cost gets a column. Prints the Markdown table of BENCHMARKS.md's
# "Polling calls" section on stdout; scratch in build/bpoll. Not part of `make bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-bin/popmon}
base=${2:-}
rounds=${ROUNDS:-7}
n=${N:-2000000}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$PWD/build/bpoll
mkdir -p "$out"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
if [ -n "$base" ]; then
	rm -rf "$out/old"
	git worktree add -q -f "$out/old" "$base"
	trap 'git worktree remove --force "$out/old"' EXIT
	(cd "$out/old" && CGO_ENABLED=0 go build -o "$out/popmon-old" ./cmd/popmon)
fi
cc -O2 -o "$out/clock" bench/clock.c
: > "$out/clock.txt"
for _ in $(seq "$rounds"); do "$out/clock" 5000000 >> "$out/clock.txt"; done
tsc=$(grep ^rdtsc_ns "$out/clock.txt" | awk '{print $2}' | median)
floor=$(awk -v t="$tsc" 'BEGIN {printf "%.2f", 2 * t}')

calls="comm_rank test testany testsome testall request_get_status iprobe improbe"
name() {
	case $1 in
	comm_rank) echo '`MPI_Comm_rank` (reference: the cheapest wrapped call)' ;;
	test) echo '`MPI_Test` (1 request)' ;;
	testany | testsome | testall) echo "\`MPI_${1^}\` (4 requests)" ;;
	request_get_status) echo '`MPI_Request_get_status` (1 request)' ;;
	iprobe) echo '`MPI_Iprobe` (no message)' ;;
	improbe) echo '`MPI_Improbe` (no message)' ;;
	esac
}
if [ -n "$base" ]; then
	echo "| MPI | call | plain ns/call | popmon ns/call | added ns/call | added / two rdtsc | added at $base |"
	echo "|---|---|---:|---:|---:|---:|---:|"
else
	echo "| MPI | call | plain ns/call | popmon ns/call | added ns/call | added / two rdtsc |"
	echo "|---|---|---:|---:|---:|---:|"
fi
for mpi in openmpi mpich; do
	command -v "mpicc.$mpi" >/dev/null || continue
	"mpicc.$mpi" -O2 -o "$out/mpipoll-$mpi" bench/mpipoll.c
	lib=$(POPMON_CACHE_DIR="$out/cache" "$bin" build --mpicc "mpicc.$mpi")
	old=
	[ -n "$base" ] && old=$(POPMON_CACHE_DIR="$out/cache-old" "$out/popmon-old" build --mpicc "mpicc.$mpi")
	: > "$out/plain-$mpi.txt"; : > "$out/popmon-$mpi.txt"; : > "$out/old-$mpi.txt"
	for _ in $(seq "$rounds"); do
		"mpirun.$mpi" -np 1 "$out/mpipoll-$mpi" "$n" >> "$out/plain-$mpi.txt"
		POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" "mpirun.$mpi" -np 1 "$out/mpipoll-$mpi" "$n" >> "$out/popmon-$mpi.txt" 2>/dev/null
		if [ -n "$old" ]; then
			POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$old" "mpirun.$mpi" -np 1 "$out/mpipoll-$mpi" "$n" >> "$out/old-$mpi.txt" 2>/dev/null
		fi
	done
	for call in $calls; do
		p=$(grep "^${call}_ns" "$out/plain-$mpi.txt" | awk '{print $2}' | median)
		q=$(grep "^${call}_ns" "$out/popmon-$mpi.txt" | awk '{print $2}' | median)
		o=
		[ -n "$old" ] && o=$(grep "^${call}_ns" "$out/old-$mpi.txt" | awk '{print $2}' | median)
		awk -v mpi="$mpi" -v nm="$(name "$call")" -v p="$p" -v q="$q" -v f="$floor" -v o="$o" 'BEGIN {
			printf "| %s | %s | %.1f | %.1f | %.1f | %.2f× |", mpi, nm, p, q, q - p, (q - p) / f
			if (o != "") printf " %.1f |", o - p
			printf "\n"
		}'
	done
done
echo
echo "Two rdtsc reads (the floor): $floor ns (bench/clock.c, median of $rounds rounds); $rounds rounds of $n calls per row."
