#!/bin/bash
# The region and OpenMP event paths, two libraries side by side: the
# instructions (valgrind's callgrind, so the machine's load does not move
# them) per region start + stop (bench/regioncall.c, 1 rank, Open MPI) and
# per OpenMP parallel region of one thread (bench/ompregion.c, n/10 + 1
# warm-up regions: clang with
# LLVM libomp's OMPT, gcc with GNU libgomp measured in place), each the
# difference of two run lengths (start-up cancels out).
#
#   scripts/bench-events.sh BASE_POPMON NEW_POPMON
#
# Prints a Markdown table: instructions per event with each library, the
# ratio new/base, and the instructions popmon adds over the plain program.
set -euo pipefail
base=$1 new=$2
out=build/bench-events
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc.openmpi -O2 -Ishim -o "$out/regioncall" bench/regioncall.c
clang -O2 -fopenmp -o "$out/ompregion.clang" bench/ompregion.c
gcc -O2 -fopenmp -o "$out/ompregion.gcc" bench/ompregion.c
ir() { # LIB PROGRAM ARGS...: the instructions of one run ("" LIB: plain)
	local lib=$1
	shift
	OMP_NUM_THREADS=1 POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" \
		valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | awk '/Collected/ {print $NF}'
}
per() { # LIB N1 N2 EVENTS_BETWEEN PROGRAM ARGS_AFTER_N...
	local lib=$1 n1=$2 n2=$3 k=$4 prog=$5
	shift 5
	local a b
	a=$(ir "$lib" "$prog" "$n1" "$@")
	b=$(ir "$lib" "$prog" "$n2" "$@")
	awk -v a="$a" -v b="$b" -v k="$k" 'BEGIN {printf "%.1f", (b - a) / k}'
}
echo "| event | plain | base | new | new/base | added, base | added, new |"
echo "|---|---:|---:|---:|---:|---:|---:|"
lb=$("$base" build --mpicc mpicc.openmpi) ln=$("$new" build --mpicc mpicc.openmpi)
# regioncall runs n/10 warm-up pairs before its n timed ones.
b=$(per "$lb" 20000 40000 22000 "$out/regioncall") n=$(per "$ln" 20000 40000 22000 "$out/regioncall")
awk -v b="$b" -v n="$n" 'BEGIN {printf "| region start + stop (MPI build) | - | %.0f | %.0f | %.4f× | - | - |\n", b, n, n / b}'
lb=$("$base" build --no-mpi) ln=$("$new" build --no-mpi)
for cc in clang gcc; do
	p=$(per "" 2000 4000 2200 "$out/ompregion.$cc" 1)
	b=$(per "$lb" 2000 4000 2200 "$out/ompregion.$cc" 1)
	n=$(per "$ln" 2000 4000 2200 "$out/ompregion.$cc" 1)
	awk -v c="$cc" -v p="$p" -v b="$b" -v n="$n" 'BEGIN {printf "| OpenMP parallel region, 1 thread (%s) | %.0f | %.0f | %.0f | %.4f× | %.0f | %.0f |\n", c, p, b, n, n / b, b - p, n - p}'
done
