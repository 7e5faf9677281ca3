#!/bin/bash
# `make bench`: measures what popmon adds, side by side with the baseline in
# one run, and writes BENCHMARKS.md.
#  1. ns per intercepted MPI call: tight loops of MPI_Comm_rank and MPI_Iprobe,
#     plain vs. under libpopmon, alternating, 7 rounds, medians; per MPI.
#  1b. byte accounting and tracing (scripts/bench-trace.sh): added ns per
#     call with bytes counted and with --trace, trace bytes per call.
#  2. hardware counters: cost per MPI call with counters off, unavailable and
#     measured, against a library built without counter code
#     (scripts/bench-counters.sh).
#  3. whole-run overhead of the demo (imbalance, 4 ranks): wall time plain vs.
#     under `popmon run`, 5 rounds each, medians.
set -euo pipefail
bin=${1:-bin/popmon}
out=build/bench
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rounds=7
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
{
echo "# Benchmarks"
echo
echo "Produced by \`make bench\` (scripts/bench.sh) on $(date -u +%Y-%m-%d), $(nproc) cores ($cpu)."
echo "Baseline and popmon are measured in the same run, alternating, and medians are reported."
echo
echo "## Added cost per intercepted MPI call"
echo
echo "Tight loops of 20 M \`MPI_Comm_rank\` and 2 M \`MPI_Iprobe\` (nothing pending) on 1 rank"
echo "(bench/mpicall.c), plain and with libpopmon preloaded; $rounds rounds."
echo "Budget: ≤ 30 ns added per call (DLB/TALP adds ≈ 125–160 ns on this machine)."
echo
echo "| MPI | call | plain ns/call | popmon ns/call | added ns/call | ratio |"
echo "|---|---|---:|---:|---:|---:|"
} > "$out/BENCHMARKS.md"

cc -O2 -o "$out/clock" bench/clock.c
: > "$out/clock.txt"
for _ in $(seq $rounds); do "$out/clock" >> "$out/clock.txt"; done
cg=$(grep ^clock_gettime_ns "$out/clock.txt" | awk '{print $2}' | median)
tsc=$(grep ^rdtsc_ns "$out/clock.txt" | awk '{print $2}' | median)

for mpi in openmpi mpich; do
	command -v "mpicc.$mpi" >/dev/null || continue
	"mpicc.$mpi" -O2 -o "$out/mpicall-$mpi" bench/mpicall.c
	lib=$("$bin" build --mpicc "mpicc.$mpi")
	launch=("mpirun.$mpi" -np 1)
	: > "$out/plain-$mpi.txt"; : > "$out/popmon-$mpi.txt"
	for _ in $(seq $rounds); do
		"${launch[@]}" "$out/mpicall-$mpi" >> "$out/plain-$mpi.txt"
		POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" "${launch[@]}" "$out/mpicall-$mpi" >> "$out/popmon-$mpi.txt" 2>/dev/null
	done
	for call in comm_rank iprobe; do
		p=$(grep "^${call}_ns" "$out/plain-$mpi.txt" | awk '{print $2}' | median)
		q=$(grep "^${call}_ns" "$out/popmon-$mpi.txt" | awk '{print $2}' | median)
		name=MPI_Comm_rank; [ $call = iprobe ] && name=MPI_Iprobe
		awk -v mpi="$mpi" -v n="$name" -v p="$p" -v q="$q" 'BEGIN {printf "| %s | `%s` | %.1f | %.1f | %.1f | %.2f× |\n", mpi, n, p, q, q-p, q/p}' >> "$out/BENCHMARKS.md"
	done
done

# Byte accounting and tracing: added ns per call, trace bytes per call.
scripts/bench-trace.sh "$bin" >> "$out/BENCHMARKS.md"

# Hardware counters: the library's cost per transition with counters off,
# unavailable and measured, against a build without counter code.
scripts/bench-counters.sh "$bin" >> "$out/BENCHMARKS.md"

# Live files: the sequence word, the mapping, a reader.
scripts/bench-live.sh "$bin" >> "$out/BENCHMARKS.md"

{
echo
echo "## Clock reads (why the TSC)"
echo
echo "One read, median of $rounds rounds of 20 M reads (bench/clock.c). Every intercepted MPI call reads the"
echo "clock twice, so \`clock_gettime\` alone would cost more than the 30 ns budget."
echo
echo "| clock | ns/read | two reads |"
echo "|---|---:|---:|"
awk -v a="$cg" -v b="$tsc" 'BEGIN {printf "| clock_gettime(CLOCK_MONOTONIC) | %.1f | %.1f |\n| rdtsc (invariant TSC) | %.1f | %.1f |\n", a, 2*a, b, 2*b}'
} >> "$out/BENCHMARKS.md"

# Added cost per OpenMP parallel region (clang + LLVM libomp, default wait
# policy: a passive one makes every region a sleep/wake-up of ~45 us).
if command -v clang >/dev/null && clang -O2 -fopenmp -o "$out/ompregion" bench/ompregion.c 2>/dev/null; then
	nolib=$("$bin" build --no-mpi)
	# 4 threads (the budget's case) and, on a smaller machine, one thread per
	# core: oversubscribed, libomp's barrier yields the CPU and the region
	# time is mostly the scheduler's.
	threads=4; [ "$(nproc)" -lt 4 ] && threads="4 $(nproc)"
	{
	echo
	echo "## Added cost per OpenMP parallel region"
	echo
	echo "20 000 \`#pragma omp parallel\` regions with an empty body (bench/ompregion.c, clang +"
	echo "LLVM libomp), plain and with libpopmon's OMPT tool; $rounds rounds, alternating, medians. $(nproc) cores."
	echo "Budget: ≤ 1 µs added per 4-thread region."
	echo
	echo "| threads | plain ns/region | popmon ns/region | added ns/region | ratio |"
	echo "|---:|---:|---:|---:|---:|"
	} >> "$out/BENCHMARKS.md"
	for t in $threads; do
		: > "$out/omp-plain.txt"; : > "$out/omp-popmon.txt"
		for _ in $(seq $rounds); do
			OMP_NUM_THREADS=$t "$out/ompregion" 20000 $t >> "$out/omp-plain.txt"
			OMP_NUM_THREADS=$t POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$nolib" "$out/ompregion" 20000 $t >> "$out/omp-popmon.txt" 2>/dev/null
		done
		p=$(grep ^parallel_region_ns "$out/omp-plain.txt" | awk '{print $2}' | median)
		q=$(grep ^parallel_region_ns "$out/omp-popmon.txt" | awk '{print $2}' | median)
		awk -v t="$t" -v p="$p" -v q="$q" 'BEGIN {printf "| %d | %.0f | %.0f | %.0f | %.2f× |\n", t, p, q, q-p, q/p}' >> "$out/BENCHMARKS.md"
	done
	if [ "$(nproc)" -lt 4 ]; then
		{
		echo
		echo "With 4 threads on $(nproc) cores the region time is mostly libomp's barrier yielding the CPU"
		echo "(\`perf record -e cpu-clock\`: about 80 % of samples in \`sched_yield\`, 2–3 % in libpopmon's callbacks),"
		echo "so the added time there follows the host's scheduler and varies from day to day; the row with one"
		echo "thread per core is the tool's own cost."
		} >> "$out/BENCHMARKS.md"
	fi
fi

{
echo
echo "## Whole-run overhead of the demo"
echo
echo "\`examples/imbalance\` (about 1 s of work) on 2 ranks and on 4 ranks (2 cores: oversubscribed), wall"
echo "time of the whole command including \`mpirun\` start-up, plain vs. \`popmon run\` (which also"
echo "writes the file and prints the report; the library build is cached). 5 rounds each, medians."
echo "Fixed costs (finalize collectives, writing the file, the report) do not grow with run length."
echo
echo "| MPI | ranks | plain s | popmon s | overhead |"
echo "|---|---:|---:|---:|---:|"
} >> "$out/BENCHMARKS.md"
for mpi in openmpi mpich; do
	command -v "mpicc.$mpi" >/dev/null || continue
	./examples/build.sh "$out/ex-$mpi" "$mpi" >/dev/null
	extra=(); [ $mpi = openmpi ] && extra=(--oversubscribe)
	for np in 2 4; do
		# Defaults: K = 50 ms, 5 iterations: 0.5 s of work on 2 ranks, 1 s on 4.
		: > "$out/wall-plain-$mpi.txt"; : > "$out/wall-popmon-$mpi.txt"
		for _ in 1 2 3 4 5; do
			s=$(date +%s%N); "mpirun.$mpi" "${extra[@]}" -np $np "$out/ex-$mpi/imbalance" >/dev/null; e=$(date +%s%N)
			echo "$(( e - s ))" >> "$out/wall-plain-$mpi.txt"
			s=$(date +%s%N); "$bin" run --mpicc "mpicc.$mpi" --format none -o "$out/w.json" -- "mpirun.$mpi" "${extra[@]}" -np $np "$out/ex-$mpi/imbalance" >/dev/null 2>&1; e=$(date +%s%N)
			echo "$(( e - s ))" >> "$out/wall-popmon-$mpi.txt"
			rm -f "$out"/w*.json
		done
		p=$(median < "$out/wall-plain-$mpi.txt"); q=$(median < "$out/wall-popmon-$mpi.txt")
		awk -v mpi="$mpi" -v np="$np" -v p="$p" -v q="$q" 'BEGIN {printf "| %s | %d | %.3f | %.3f | %+.1f %% |\n", mpi, np, p/1e9, q/1e9, (q-p)/p*100}' >> "$out/BENCHMARKS.md"
	done
done
{
echo
echo "The difference is a fixed cost, not a rate: \`popmon run\` itself (asking the MPI compiler wrapper"
echo "for its version and command line, checking the cached library's sha256, reading the program's ELF"
echo "dependencies to tell its MPI and OpenMP runtime; rendering the report) takes 60–80 ms, and with"
echo "MPICH on more ranks than cores each of the ~8 collectives at \`MPI_Finalize\` (node discovery, region"
echo "names, the gather, the call-profile reductions) costs a scheduler time slice because MPICH busy-waits."
echo "The per-call cost above is what scales with the run."
} >> "$out/BENCHMARKS.md"
# popmon pages over 1,000 runs x 10 regions (synthetic measurement files).
go=$(command -v go || echo /usr/local/go/bin/go)
pns=$("$go" test -run '^$' -bench Pages1000 -benchtime 3x ./internal/pages 2>/dev/null | awk '/^BenchmarkPages1000/ {print $3}')
if [ -n "$pns" ]; then
	{
	echo
	echo "## popmon pages over 1,000 runs"
	echo
	echo "\`go test -run '^\$' -bench Pages1000 -benchtime 3x ./internal/pages\`: 1,000 synthetic popmon measurement files"
	echo "(1/2/4/8 ranks) × 10 regions, all regions shown; reading, scaling tables, evolution charts, badges."
	echo
	echo "| runs × regions | time per site |"
	echo "|---|---:|"
	awk -v n="$pns" 'BEGIN {printf "| 1,000 × 10 | %.2f s |\n", n/1e9}'
	} >> "$out/BENCHMARKS.md"
fi
cp "$out/BENCHMARKS.md" BENCHMARKS.md
cat BENCHMARKS.md
