#!/bin/bash
# Hardware-counter costs for `make bench` (called by scripts/bench.sh, or
# alone: scripts/bench-counters.sh [bin/popmon]); prints a BENCHMARKS.md
# section on stdout, raw numbers in build/bench/.
#  1. The library's cost per MPI call (two state transitions: useful -> MPI ->
#     useful) side by side in one run, alternating, 7 rounds, medians, per
#     MPI: no library; libpopmon built without counter code
#     (-DPOPMON_NO_COUNTERS, the baseline); counters off; counters auto (on
#     a machine without a PMU: unavailable, which must cost what the baseline
#     costs; with a PMU: rdpmc where the kernel allows it, else read()); with
#     a PMU and rdpmc, read() forced too (POPMON_COUNTERS_METHOD=read);
#     without a PMU, read() of software events through the stand-in PMU of
#     the tests (internal/e2e/testdata/fakepmu.c), labelled as such.
#  2. The raw cost of one reading of the counter group (bench/perfread.c).
set -euo pipefail
bin=${1:-bin/popmon}
out=build/bench
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rounds=${ROUNDS:-7}
n=20000000   # MPI_Comm_rank calls per run without counter readings
nr=2000000   # with a reading (system call) at each transition
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

: > "$out/perfread.txt"
if cc -O2 -o "$out/perfread" bench/perfread.c; then
	"$out/perfread" > "$out/perfread.txt"
fi
rm -f "$out/fakepmu.so"
cc -shared -fPIC -o "$out/fakepmu.so" internal/e2e/testdata/fakepmu.c -ldl || true

echo
echo "## Hardware counters: cost per MPI call"
echo
echo "Produced by \`scripts/bench-counters.sh $bin\` (part of \`make bench\`), on the same machine and day."
echo "Tight loops of \`MPI_Comm_rank\` on 1 rank (bench/mpicall.c: 20 M calls, 2 M where every transition reads"
echo "the counters), each call being two state transitions (useful → MPI → useful, so two counter readings"
echo "when counters are measured); $rounds rounds alternating between the rows, medians. The baseline is the same"
echo "library built without any counter code (\`-DPOPMON_NO_COUNTERS\`); \"added\" and \"ratio\" are against it."
echo

for mpi in openmpi mpich; do
	command -v "mpicc.$mpi" >/dev/null || continue
	"mpicc.$mpi" -O2 -o "$out/mpicall-$mpi" bench/mpicall.c
	lib=$("$bin" build --mpicc "mpicc.$mpi")
	# The baseline: the embedded sources, built like popmon builds them, without counters.
	base=$(scripts/shim-variant.sh "$mpi" -DPOPMON_NO_COUNTERS "$out/shim-nocounters-$mpi")
	launch=("mpirun.$mpi" -np 1)
	# What auto finds here decides the counter rows.
	rm -f "$out/auto-$mpi.json"
	POPMON_OUTPUT="$out/auto-$mpi.json" POPMON_QUIET=1 LD_PRELOAD="$lib" "${launch[@]}" "$out/mpicall-$mpi" 1000 >/dev/null 2>&1
	auto=$(grep -o '"counters": {[^}]*}' "$out/auto-$mpi.json")
	rows=(plain base off auto)
	if grep -q '"available": true' <<<"$auto"; then
		# auto measured them (with rdpmc where allowed); read() forced too.
		if grep -q '"method": "rdpmc"' <<<"$auto"; then
			rows+=(read)
		fi
	elif [ -f "$out/fakepmu.so" ]; then
		rm -f "$out/fake-$mpi.json"
		POPMON_OUTPUT="$out/fake-$mpi.json" POPMON_QUIET=1 LD_PRELOAD="$lib:$out/fakepmu.so" "${launch[@]}" "$out/mpicall-$mpi" 1000 >/dev/null 2>&1
		if grep -q '"available": true' "$out/fake-$mpi.json" 2>/dev/null; then
			rows+=(fake)
			fake_used=1
		fi
	fi
	for r in "${rows[@]}"; do : > "$out/ctr-$r-$mpi.txt"; done
	for _ in $(seq "$rounds"); do
		for r in "${rows[@]}"; do
			case $r in
			plain) "${launch[@]}" "$out/mpicall-$mpi" $n ;;
			base) POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$base" "${launch[@]}" "$out/mpicall-$mpi" $n ;;
			off) POPMON_COUNTERS=off POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" "${launch[@]}" "$out/mpicall-$mpi" $n ;;
			auto) POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" "${launch[@]}" "$out/mpicall-$mpi" $n ;;
			read) POPMON_COUNTERS_METHOD=read POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" "${launch[@]}" "$out/mpicall-$mpi" $nr ;;
			fake) POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib:$out/fakepmu.so" "${launch[@]}" "$out/mpicall-$mpi" $nr ;;
			esac 2>/dev/null | grep ^comm_rank_ns | awk '{print $2}' >> "$out/ctr-$r-$mpi.txt"
		done
	done
	method=$(sed -n 's/.*"method": "\([^"]*\)".*/\1/p' <<<"$auto")
	echo "**$mpi** — what the library found here: \`$auto\`"
	echo
	echo "| library | ns/call | added ns/call | ns/transition added | ratio |"
	echo "|---|---:|---:|---:|---:|"
	b=$(median < "$out/ctr-base-$mpi.txt")
	for r in "${rows[@]}"; do
		v=$(median < "$out/ctr-$r-$mpi.txt")
		case $r in
		plain) label="no library" ;;
		base) label="libpopmon without counter code (baseline)" ;;
		off) label="counters off" ;;
		auto) label="counters auto: ${method:-unavailable here}" ;;
		read) label="counters with read() (POPMON_COUNTERS_METHOD=read)" ;;
		fake) label="counters with read() of software events (stand-in PMU, fakepmu.so: no hardware counters here)" ;;
		esac
		if [ "$r" = plain ]; then
			awk -v l="$label" -v v="$v" 'BEGIN {printf "| %s | %.1f | | | |\n", l, v}'
		else
			awk -v l="$label" -v v="$v" -v b="$b" 'BEGIN {printf "| %s | %.1f | %+.1f | %+.1f | %.2f× |\n", l, v, v-b, (v-b)/2, v/b}'
		fi
	done
	echo
done
if [ -n "${fake_used:-}" ]; then
	echo "This machine has no PMU, so the cost with hardware counters (rdpmc or \`read()\`) could not be measured"
	echo "here; the last row reads software clock events with the same \`read()\` of a two-event group instead,"
	echo "which shows what the system call costs on this machine (a virtual machine: system calls are slow)."
	echo "On a machine with a PMU this script measures the rdpmc and \`read()\` rows instead."
	echo
fi

[ -s "$out/perfread.txt" ] || exit 0
readns=$(awk '/^read_ns/ {print $2}' "$out/perfread.txt")
rdpmcns=$(awk '/^rdpmc_ns/ {$1=""; print substr($0, 2)}' "$out/perfread.txt")
events=$(awk '/^events/ {print $2}' "$out/perfread.txt")
if [[ $rdpmcns == n/a* ]]; then rd="not measurable here (${rdpmcns#n/a })"; else rd="$rdpmcns ns"; fi
what="hardware events"
[ "$events" = software ] && what="software events: task
and CPU clocks, a stand-in for the system call, no PMU here"
echo "One reading of the two-counter group by itself (bench/perfread.c, 2 M readings of $what): \`read()\` $readns ns;"
echo "rdpmc of both counters (seqlock protocol): $rd."
