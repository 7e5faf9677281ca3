#!/bin/bash
# scripts/bench-lewi.sh [BIN [ROUNDS]]: LeWI side by side, plain `popmon run`
# against `popmon run --lewi`, interleaved rounds (plain, --lewi, plain, ...),
# with Open MPI and MPICH, 2 ranks bound to one core each
# (examples/lewi/lewi_imbalance, its own elapsed time, medians):
#   imbalanced   lewi_imbalance 24 (rank 0 twice the work; designed 0.75x)
#   balanced     lewi_imbalance 24 10 64 1 (nothing to lend: no harm, <= 2 %)
#   MPI-only     lewi_imbalance.mpi 24 10 64 1 (no OpenMP: no harm, <= 2 %)
# each with LLVM's libomp (clang) and GNU libgomp (gcc); and a control, one
# unbound rank with 1 and 2 threads (its two columns), what the machine can
# give a process at the time. Writes
# build/bench/lewi.md (the section BENCHMARKS.md quotes). The machine's load
# average is printed with the results: other jobs on the CPUs make every
# number noisy (a borrowed CPU is then shared too). So before each round
# (a plain run and a --lewi run, or the control's two) it waits up to
# QUIET_S seconds (default 60; 0: not at all) for both CPUs to be idle
# (>= 95 % over half a second), and says how many rounds started without.
# BREAKDOWN=N (default 0) adds where the imbalanced case's time goes: N
# traced --lewi runs per MPI and runtime, each read by bench/lewitrace (the
# regions on 1 and on 2 CPUs, how often rank 0's first region after rank
# 1's work began before the lend reached it), and the runtimes' own cost of
# a 2-thread region without popmon (one unbound rank, OMP_WAIT_POLICY=
# passive as under --lewi, 1 and 2 threads, medians of N).
set -euo pipefail
bin=${1:-bin/popmon}
rounds=${2:-5}
out=build/bench
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export POPMON_LEWI_KEY=bench-$$
trap 'rm -f /dev/shm/popmon-lewi-$(id -u)-$POPMON_LEWI_KEY' EXIT
quiet_s=${QUIET_S:-60}
noisy=0
# quiet: waits up to quiet_s seconds for the CPUs to be >= 95 % idle over
# 0.5 s (/proc/stat); counts the rounds that start without that.
quiet() {
	[ "$quiet_s" -gt 0 ] || return 0
	local end=$((SECONDS + quiet_s)) a b idle total k
	while [ $SECONDS -lt $end ]; do
		read -ra a < /proc/stat; sleep 0.5; read -ra b < /proc/stat
		idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )); total=0
		for k in 1 2 3 4 5 6 7 8; do total=$((total + b[k] - a[k])); done
		[ $total -gt 0 ] && [ $((idle * 100 / total)) -ge 95 ] && return 0
	done
	noisy=$((noisy + 1))
}
# launcher IMPL: run=(the MPI's mpirun, 2 ranks bound to one core each).
launcher() {
	case $1 in
	openmpi) run=(mpirun.openmpi -np 2 --bind-to core) ;;
	mpich) run=(mpirun.mpich -np 2 -bind-to core) ;;
	esac
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
md="$out/lewi.md"
{
echo
echo "## LeWI: plain vs --lewi"
echo
echo "Produced by \`scripts/bench-lewi.sh $bin $rounds\` on $(date -u +%Y-%m-%d), $(nproc) cores, load average"
echo "$(cut -d' ' -f1-3 /proc/loadavg) at the start. 2 ranks bound to one core each; each cell is the median"
echo "of $rounds interleaved rounds of the program's own elapsed time (\`elapsed_s\`)."
echo
echo "| MPI | program | OpenMP | plain s | --lewi s | ratio |"
echo "|---|---|---|---:|---:|---:|"
} > "$md"
for impl in openmpi mpich; do
	command -v "mpicc.$impl" >/dev/null || continue
	sh examples/build.sh "$out/ex-$impl" "$impl" >/dev/null 2>&1 || true
	launcher "$impl"
	# The control: the time of 2 threads over 1 thread for one unbound rank
	# (ratio 1, no popmon): what the machine can give a process now (about
	# 0.5 idle); LeWI cannot gain more than it allows.
	prog="$out/ex-$impl/lewi_imbalance.clang"
	if [ -x "$prog" ]; then
		ctl=()
		[ "$impl" = openmpi ] && ctl=(-x OMP_NUM_THREADS --bind-to none) || ctl=(-bind-to none)
		for t in 1 2; do : > "$out/lewi-ctl$t.txt"; done
		for _ in $(seq "$rounds"); do
			quiet
			for t in 1 2; do
				OMP_NUM_THREADS=$t "${run[0]}" -np 1 "${ctl[@]}" "$prog" 24 10 64 1 2>/dev/null |
					awk '/^elapsed_s/ {print $2}' >> "$out/lewi-ctl$t.txt" || true
			done
		done
		c1=$(median < "$out/lewi-ctl1.txt")
		c2=$(median < "$out/lewi-ctl2.txt")
		printf '| %s | control: 1 rank, 1 vs 2 threads | libomp (clang) | %.3f | %.3f | %.2fx |\n' "$impl" "$c1" "$c2" \
			"$(awk -v l="$c2" -v p="$c1" 'BEGIN {print l / p}')" | tee -a "$md"
	fi
	for case in "imbalanced clang 24" "imbalanced gcc 24" "balanced clang 24 10 64 1" "balanced gcc 24 10 64 1" "MPI-only mpi 24 10 64 1"; do
		read -r name rt args <<<"$case"
		prog="$out/ex-$impl/lewi_imbalance.$rt"
		[ -x "$prog" ] || continue
		for mode in plain lewi; do : > "$out/lewi-$mode.txt"; done
		for _ in $(seq "$rounds"); do
			quiet
			for mode in plain lewi; do
				flags=(); [ $mode = lewi ] && flags=(--lewi)
				"$bin" run --format none --force -o "$out/lewi.json" "${flags[@]}" -- "${run[@]}" "$prog" $args 2>/dev/null |
					awk '/^elapsed_s/ {print $2}' >> "$out/lewi-$mode.txt" || true
			done
		done
		p=$(median < "$out/lewi-plain.txt")
		l=$(median < "$out/lewi-lewi.txt")
		omp=$rt; [ "$rt" = clang ] && omp="libomp (clang)"; [ "$rt" = gcc ] && omp="libgomp (gcc)"; [ "$rt" = mpi ] && omp="none"
		printf '| %s | %s | %s | %.3f | %.3f | %.2fx |\n' "$impl" "$name" "$omp" "$p" "$l" "$(awk -v l="$l" -v p="$p" 'BEGIN {print l / p}')" | tee -a "$md"
	done
done
breakdown=${BREAKDOWN:-0}
if [ "$breakdown" -gt 0 ] && command -v go >/dev/null; then
	go build -o "$out/lewitrace" ./bench/lewitrace
	{
	echo
	echo "Where the imbalanced case's time goes (\`BREAKDOWN=$breakdown\`: $breakdown traced \`--lewi\` runs each, read by"
	echo "\`bench/lewitrace\`; rank 0's regions on 1 and 2 CPUs, the share of iterations whose first region after"
	echo "rank 1's work started before rank 1's lend reached it, the iteration in 1-CPU regions over the plain"
	echo "run's 20; and without popmon, one unbound rank with OMP_WAIT_POLICY=passive, 2 threads over 1):"
	echo
	echo "| MPI | OpenMP | run | 1-CPU region µs | 2-CPU region µs | 2 / 1 | misses | iteration / plain |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|"
	} >> "$md"
	for impl in openmpi mpich; do
		command -v "mpicc.$impl" >/dev/null || continue
		launcher "$impl"
		for rt in clang gcc; do
			prog="$out/ex-$impl/lewi_imbalance.$rt"
			[ -x "$prog" ] || continue
			omp="libomp (clang)"; [ "$rt" = gcc ] && omp="libgomp (gcc)"
			for i in $(seq "$breakdown"); do
				quiet
				rm -rf "$out/lewi-trace.json" "$out"/lewi-trace*.trace
				"$bin" run --format none -o "$out/lewi-trace.json" --trace --lewi -- "${run[@]}" "$prog" 24 >/dev/null 2>&1 || continue
				"$out/lewitrace" "$out/lewi-trace.trace" | awk -v impl="$impl" -v omp="$omp" -v i="$i" '
					/^iterations/ {one = $9; two = $14; r = $16; gsub(/[()]/, "", r)}
					/^misses/ {m = $3; gsub(/[(]/, "", m)}
					/^iteration / {u = $7}
					END {printf "| %s | %s | %d | %s | %s | %s | %s %% | %s |\n", impl, omp, i, one, two, r, m, u}' | tee -a "$md"
			done
			if [ "$impl" = openmpi ]; then
				for t in 1 2; do
					: > "$out/lewi-ctl$t.txt"
					for _ in $(seq "$breakdown"); do
						OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$t mpirun.openmpi -np 1 -x OMP_NUM_THREADS -x OMP_WAIT_POLICY --bind-to none "$prog" 24 10 64 1 2>/dev/null |
							awk '/^elapsed_s/ {print $2}' >> "$out/lewi-ctl$t.txt" || true
					done
				done
				c1=$(median < "$out/lewi-ctl1.txt")
				c2=$(median < "$out/lewi-ctl2.txt")
				printf '| no popmon, 1 rank | %s | median | %.0f | %.0f | %.3f | | |\n' "$omp" \
					"$(awk -v c="$c1" 'BEGIN {print c / 240 * 1e6}')" "$(awk -v c="$c2" 'BEGIN {print c / 240 * 1e6}')" \
					"$(awk -v a="$c1" -v b="$c2" 'BEGIN {print b / a}')" | tee -a "$md"
			fi
		done
	done
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); rounds started on CPUs not idle (after ${quiet_s} s of waiting): $noisy" | tee -a "$md"
