#!/bin/bash
# bench-compare-mpicall.sh [BASE]: the per-MPI-call cost of libpopmon built from commit BASE (default
# 3268704) against the working tree, side by side with the plain program in one session: bench/mpicall.c
# (20 M MPI_Comm_rank, 2 M MPI_Iprobe, 1 rank) alternating plain, BASE, now; 7 rounds; medians; per MPI.
# Prints one line per MPI and call, and the rdtsc cost (the floor is two reads). Scratch in build/bcmp.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-3268704}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$PWD/build/bcmp
mkdir -p "$out"
rm -rf "$out/old"
git worktree add -q -f "$out/old" "$base"
trap 'git worktree remove --force "$out/old"' EXIT
(cd "$out/old" && go build -o "$out/popmon-old" ./cmd/popmon)
go build -o "$out/popmon-new" ./cmd/popmon
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
cc -O2 -o "$out/clock" bench/clock.c
for _ in 1 2 3; do "$out/clock"; done | grep rdtsc_ns | awk '{print $2}' | median > "$out/tsc.txt"
for mpi in openmpi mpich; do
	command -v "mpicc.$mpi" >/dev/null || continue
	"mpicc.$mpi" -O2 -o "$out/mpicall-$mpi" bench/mpicall.c
	lo=$(POPMON_CACHE_DIR="$out/cache-old" "$out/popmon-old" build --mpicc "mpicc.$mpi")
	ln=$(POPMON_CACHE_DIR="$out/cache-new" "$out/popmon-new" build --mpicc "mpicc.$mpi")
	: > "$out/plain-$mpi.txt"; : > "$out/old-$mpi.txt"; : > "$out/new-$mpi.txt"
	for _ in 1 2 3 4 5 6 7; do
		"mpirun.$mpi" -np 1 "$out/mpicall-$mpi" >> "$out/plain-$mpi.txt"
		POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lo" "mpirun.$mpi" -np 1 "$out/mpicall-$mpi" >> "$out/old-$mpi.txt" 2>/dev/null
		POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$ln" "mpirun.$mpi" -np 1 "$out/mpicall-$mpi" >> "$out/new-$mpi.txt" 2>/dev/null
	done
	for call in comm_rank iprobe; do
		p=$(grep "^${call}_ns" "$out/plain-$mpi.txt" | awk '{print $2}' | median)
		o=$(grep "^${call}_ns" "$out/old-$mpi.txt" | awk '{print $2}' | median)
		n=$(grep "^${call}_ns" "$out/new-$mpi.txt" | awk '{print $2}' | median)
		awk -v m="$mpi" -v c="$call" -v p="$p" -v o="$o" -v n="$n" 'BEGIN {printf "%s %s plain=%.2f base_added=%.2f now_added=%.2f\n", m, c, p, o-p, n-p}'
	done
done
echo "rdtsc_ns=$(cat "$out/tsc.txt")"
