#!/bin/bash
# bench-trace.sh: what byte accounting and tracing add per MPI call, side by
# side with plain MPI and popmon without them, in one run (part of
# `make bench`, scripts/bench.sh; prints a BENCHMARKS.md section).
#   scripts/bench-trace.sh [POPMON]     default bin/popmon
# bench/mpicall.c with 2 M MPI_Comm_rank, 200 k MPI_Iprobe and 200 k
# MPI_Sendrecv (8 bytes to itself) on 1 rank, 7 rounds alternating the four
# variants, medians:
#   plain           the program alone
#   no bytes        libpopmon with POPMON_BYTES=0
#   popmon          libpopmon as it runs by default (bytes counted)
#   --trace         libpopmon tracing (POPMON_TRACE=1; a 256 MiB buffer, so
#                   that no flush lands in a timed loop)
set -euo pipefail
bin=${1:-bin/popmon}
out=build/bench
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rounds=${ROUNDS:-7}
n=2000000
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo
echo "## Byte accounting and tracing per MPI call"
echo
echo "\`scripts/bench-trace.sh\`: bench/mpicall.c (2 M \`MPI_Comm_rank\`, 200 k \`MPI_Iprobe\`, 200 k"
echo "\`MPI_Sendrecv\` of 8 bytes to itself) on 1 rank: plain; libpopmon with \`POPMON_BYTES=0\`; libpopmon"
echo "as by default (bytes and sizes counted); libpopmon tracing (\`POPMON_TRACE=1\`, 256 MiB buffer: no"
echo "flush in the loops). $rounds rounds alternating, medians, ns per call. Targets: bytes ≤ 3 ns on calls"
echo "without data (they run none of its code), tracing ≤ 10 ns over popmon."
echo
echo "| MPI | call | plain | no bytes | popmon | --trace | bytes add | trace adds |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
trace_rows=""
for mpi in openmpi mpich; do
	command -v "mpicc.$mpi" >/dev/null || continue
	"mpicc.$mpi" -O2 -o "$out/mpicall-$mpi" bench/mpicall.c
	lib=$("$bin" build --mpicc "mpicc.$mpi")
	launch=("mpirun.$mpi" -np 1)
	for v in plain nobytes popmon trace; do : > "$out/tr-$v-$mpi.txt"; done
	tdir="$out/trace-$mpi"
	for _ in $(seq "$rounds"); do
		"${launch[@]}" "$out/mpicall-$mpi" $n >> "$out/tr-plain-$mpi.txt"
		POPMON_BYTES=0 POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" "${launch[@]}" "$out/mpicall-$mpi" $n >> "$out/tr-nobytes-$mpi.txt" 2>/dev/null
		POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" "${launch[@]}" "$out/mpicall-$mpi" $n >> "$out/tr-popmon-$mpi.txt" 2>/dev/null
		rm -rf "$tdir"
		POPMON_TRACE=1 POPMON_TRACE_DIR="$tdir" POPMON_TRACE_BUFFER=256m POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" "${launch[@]}" "$out/mpicall-$mpi" $n >> "$out/tr-trace-$mpi.txt" 2>/dev/null
	done
	for call in comm_rank iprobe sendrecv; do
		declare -A v=()
		for x in plain nobytes popmon trace; do
			v[$x]=$(grep "^${call}_ns" "$out/tr-$x-$mpi.txt" | awk '{print $2}' | median)
		done
		name=MPI_Comm_rank; [ $call = iprobe ] && name=MPI_Iprobe; [ $call = sendrecv ] && name=MPI_Sendrecv
		awk -v mpi="$mpi" -v n="$name" -v p="${v[plain]}" -v a="${v[nobytes]}" -v b="${v[popmon]}" -v c="${v[trace]}" \
			'BEGIN {printf "| %s | `%s` | %.1f | %.1f | %.1f | %.1f | %+.1f | %+.1f |\n", mpi, n, p, a, b, c, b-a, c-b}'
	done
	calls=$(( n + n / 10 + n / 10 + n / 10 + 4 ))
	bytes=$(du -b "$tdir"/*.trace | awk '{s += $1} END {print s}')
	trace_rows="$trace_rows$(awk -v mpi="$mpi" -v b="$bytes" -v c="$calls" 'BEGIN {printf "| %s | %d | %d | %.1f |\\n", mpi, c, b, b/c}')"
done
echo
echo "Trace size: the last traced round's file over the calls it made (the warm-up's 200 k"
echo "\`MPI_Comm_rank\` included):"
echo
echo "| MPI | calls | trace bytes | bytes per call |"
echo "|---|---:|---:|---:|"
printf "%b" "${trace_rows:-}"
