#!/bin/bash
# bench-poll.sh [POPMON [BASE]]: what libpopmon adds to a polling call that completes nothing, against
# the two-rdtsc floor and one ordered read plus one plain (what popmon's entry and exit read), side by side with the plain
# program in one run: bench/mpipoll.c (1 rank, 4 non-blocking receives pending that nothing matches
# during the loops; N calls each of MPI_Comm_rank, MPI_Test, MPI_Testany, MPI_Testsome, MPI_Testall,
# MPI_Request_get_status, MPI_Iprobe, MPI_Improbe), plain and under libpopmon alternating, ROUNDS
# rounds (default 7), medians, per MPI. With BASE (a commit), the library built from BASE runs in the
# same rounds too and its added cost gets a column. Prints the Markdown table of BENCHMARKS.md's
# "Polling calls" section on stdout; scratch in build/bpoll. Not part of `make bench`.
# STAT=min takes each run's fastest chunk of 1000 calls (bench/mpipoll.c's NAME_min_ns, and
# bench/clock.c's rdtsc_min_ns for the floor) instead of its loops' means: on a shared machine a
# loop's mean holds other processes' time slices, its fastest chunk none.
# INSTR=1 adds a table of instructions per call (valgrind's callgrind, 100 k calls, one run each: the
# same on a loaded machine, where the timings are noise) for plain, popmon (and BASE).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-bin/popmon}
base=${2:-}
rounds=${ROUNDS:-7}
n=${N:-2000000}
key=_
[ "${STAT:-mean}" = min ] && key=_min_
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
tsc=$(grep "^rdtsc${key}ns" "$out/clock.txt" | awk '{print $2}' | median)
floor=$(awk -v t="$tsc" 'BEGIN {printf "%.2f", 2 * t}')
# What a call under popmon reads: one ordered read (entry) and one plain (exit).
ord=$(grep "^rdtsc_ordered${key}ns" "$out/clock.txt" | awk '{print $2}' | median)
floor2=$(awk -v t="$tsc" -v o="$ord" 'BEGIN {printf "%.2f", t + o}')

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
	echo "| MPI | call | plain ns/call | popmon ns/call | added ns/call | added / two rdtsc | added / ordered + plain | added at $base |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|"
else
	echo "| MPI | call | plain ns/call | popmon ns/call | added ns/call | added / two rdtsc | added / ordered + plain |"
	echo "|---|---|---:|---:|---:|---:|---:|"
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
		p=$(grep "^${call}${key}ns" "$out/plain-$mpi.txt" | awk '{print $2}' | median)
		q=$(grep "^${call}${key}ns" "$out/popmon-$mpi.txt" | awk '{print $2}' | median)
		o=
		[ -n "$old" ] && o=$(grep "^${call}${key}ns" "$out/old-$mpi.txt" | awk '{print $2}' | median)
		awk -v mpi="$mpi" -v nm="$(name "$call")" -v p="$p" -v q="$q" -v f="$floor" -v g="$floor2" -v o="$o" 'BEGIN {
			printf "| %s | %s | %.1f | %.1f | %.1f | %.2f× | %.2f× |", mpi, nm, p, q, q - p, (q - p) / f, (q - p) / g
			if (o != "") printf " %.1f |", o - p
			printf "\n"
		}'
	done
done
echo
echo "Two rdtsc reads (the floor): $floor ns; one ordered (lfence; rdtsc) and one plain read, what popmon's entry and exit read: $floor2 ns (bench/clock.c, medians of $rounds rounds); $rounds rounds of $n calls per row; ${STAT:-mean} of each run."

[ "${INSTR:-}" = 1 ] || exit 0
command -v valgrind >/dev/null || { echo "(INSTR=1: valgrind is not installed)"; exit 0; }
# Instructions per call of each loop (inclusive), from callgrind's profile of one run.
instr() { # OUT
	callgrind_annotate --inclusive=yes --auto=no "$1" 2>/dev/null | sed 's/([^)]*)//' |
		awk -v n=100000 '$2 ~ /mpipoll.c:loop_/ {gsub(",", "", $1); f = $2; sub(/.*loop_/, "", f); printf "%s %.1f\n", f, $1 / n}'
}
echo
if [ -n "$base" ]; then
	echo "| MPI | call | plain instructions/call | popmon | added | added at $base |"
	echo "|---|---|---:|---:|---:|---:|"
else
	echo "| MPI | call | plain instructions/call | popmon | added |"
	echo "|---|---|---:|---:|---:|"
fi
for mpi in openmpi mpich; do
	command -v "mpicc.$mpi" >/dev/null || continue
	"mpicc.$mpi" -O2 -g -o "$out/mpipoll-g-$mpi" bench/mpipoll.c
	lib=$(POPMON_CACHE_DIR="$out/cache" "$bin" build --mpicc "mpicc.$mpi")
	valgrind --tool=callgrind --callgrind-out-file="$out/cg-plain-$mpi" "$out/mpipoll-g-$mpi" 100000 >/dev/null 2>&1
	POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" valgrind --tool=callgrind \
		--callgrind-out-file="$out/cg-popmon-$mpi" "$out/mpipoll-g-$mpi" 100000 >/dev/null 2>&1
	instr "$out/cg-plain-$mpi" > "$out/i-plain-$mpi.txt"
	instr "$out/cg-popmon-$mpi" > "$out/i-popmon-$mpi.txt"
	: > "$out/i-old-$mpi.txt"
	if [ -n "$base" ]; then
		old=$(POPMON_CACHE_DIR="$out/cache-old" "$out/popmon-old" build --mpicc "mpicc.$mpi")
		POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$old" valgrind --tool=callgrind \
			--callgrind-out-file="$out/cg-old-$mpi" "$out/mpipoll-g-$mpi" 100000 >/dev/null 2>&1
		instr "$out/cg-old-$mpi" > "$out/i-old-$mpi.txt"
	fi
	for call in $calls; do
		p=$(awk -v c="$call" '$1 == c {print $2}' "$out/i-plain-$mpi.txt")
		q=$(awk -v c="$call" '$1 == c {print $2}' "$out/i-popmon-$mpi.txt")
		o=$(awk -v c="$call" '$1 == c {print $2}' "$out/i-old-$mpi.txt")
		awk -v mpi="$mpi" -v nm="$(name "$call")" -v p="$p" -v q="$q" -v o="$o" 'BEGIN {
			printf "| %s | %s | %.0f | %.0f | %+.0f |", mpi, nm, p, q, q - p
			if (o != "") printf " %+.0f |", o - p
			printf "\n"
		}'
	done
done
