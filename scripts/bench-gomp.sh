#!/bin/sh
# bench-gomp.sh: what GNU libgomp's measurement in place (GOMP interposition,
# shim/gomp.c) adds to a GCC-built OpenMP program, side by side with the
# plain program on libgomp and with the same program on LLVM's libomp, plain
# and measured through OMPT (--openmp=libomp). One run, alternating, medians.
#
#   scripts/bench-gomp.sh [POPMON] [ROUNDS]     defaults: bin/popmon, 7
#
# Per parallel region: bench/ompregion.c (empty regions); per loop chunk and
# per barrier: bench/ompchunk.c (schedule(dynamic, 1), explicit barriers).
# Prints a Markdown table for BENCHMARKS.md.
set -eu
bin=${1:-bin/popmon}
rounds=${2:-7}
out=build/bench
mkdir -p "$out"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
libomp=
for p in /usr/lib/x86_64-linux-gnu/libomp.so.5 /usr/lib/aarch64-linux-gnu/libomp.so.5 /usr/lib/llvm-*/lib/libomp.so.5; do
	[ -f "$p" ] && { libomp=$p; break; }
done
[ -n "$libomp" ] || { echo "$0: LLVM libomp not found (apt-get install libomp-dev)" >&2; exit 1; }
gcc -O2 -fopenmp -o "$out/ompregion.gcc" bench/ompregion.c
gcc -O2 -fopenmp -o "$out/ompchunk.gcc" bench/ompchunk.c
lib=$("$bin" build --no-mpi)
threads=${THREADS:-"2 4"}
# The four ways one GCC-built program runs: on libgomp plain, on libgomp
# measured in place, on libomp plain, on libomp measured through OMPT.
run() { # way prog args...
	way=$1; shift
	case $way in
	gomp) "$@" ;;
	gomp+popmon) POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" "$@" 2>/dev/null ;;
	omp) LD_PRELOAD="$libomp" "$@" ;;
	omp+popmon) POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib:$libomp" "$@" 2>/dev/null ;;
	esac
}
ways="gomp gomp+popmon omp omp+popmon"
echo "| threads | per | libgomp ns | libgomp + popmon (GOMP) ns | ratio | added ns | libomp ns | libomp + popmon (OMPT) ns | ratio | added ns |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for t in $threads; do
	for w in $ways; do : > "$out/gomp-$t-$w.txt"; done
	i=0
	while [ $i -lt "$rounds" ]; do
		for w in $ways; do
			OMP_NUM_THREADS=$t run "$w" "$out/ompregion.gcc" 20000 "$t" >> "$out/gomp-$t-$w.txt"
			OMP_NUM_THREADS=$t run "$w" "$out/ompchunk.gcc" 200000 "$t" >> "$out/gomp-$t-$w.txt"
		done
		i=$((i + 1))
	done
	for m in parallel_region loop_chunk barrier; do
		for w in $ways; do
			eval "v_$(echo "$w" | tr '+' '_')=$(grep "^${m}_ns" "$out/gomp-$t-$w.txt" | awk '{print $2}' | median)"
		done
		# shellcheck disable=SC2154 # set by eval above
		awk -v t="$t" -v m="$m" -v a="$v_gomp" -v b="$v_gomp_popmon" -v c="$v_omp" -v d="$v_omp_popmon" \
			'BEGIN { printf "| %s | %s | %.1f | %.1f | %.2f× | %.1f | %.1f | %.1f | %.2f× | %.1f |\n", t, m, a, b, b/a, b-a, c, d, d/c, d-c }'
	done
done
echo
echo "$(nproc) cores, $rounds rounds alternating, medians; command: scripts/bench-gomp.sh $bin $rounds"
