#!/bin/bash
# scripts/bench-finalize.sh [BIN]: the cost of finalize and of reading large
# measurements, full form (per-process records gathered to rank 0, the
# design up to the record limit) side by side with the summary form
# (reductions, above it). Part of `make bench`; runs alone too. Writes
# build/bench/finalize.md.
#  1. real runs with Open MPI on this machine, P = 2 … 16 oversubscribed:
#     rank 0's finalize time and peak-RSS growth (POPMON_FINALIZE_STATS=1),
#     POPMON_MAX_PROCESS_RECORDS default (full) vs 0 (summary); 3 rounds,
#     medians.
#  2. the reduction simulated in one process for P = 10^3 … 10^6 × 100
#     regions (shim/test/reduce_test.c bench): the measured cost of one
#     combination, the tree's critical path, rank 0's bytes in both designs.
#  3. popmon report and popmon scaling on synthetic measurements of P ranks ×
#     100 regions (scripts/benchgen), both forms: wall time and peak RSS.
set -euo pipefail
bin=${1:-bin/popmon}
out=build/bench
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
rounds=3
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
md="$out/finalize.md"
{
echo
echo "## Finalize and large measurements (full form vs summary form)"
echo
echo "Produced by \`scripts/bench-finalize.sh $bin\` (part of \`make bench\`) on $(date -u +%Y-%m-%d), $(nproc) cores."
echo "Full form: every process's record of every region gathered to rank 0 (the design up to"
echo "\`POPMON_MAX_PROCESS_RECORDS\`, 4096 by default; before issue 13 the only one). Summary form: reductions"
echo "(docs/library.md, \"Finalize\"), forced here with \`POPMON_MAX_PROCESS_RECORDS=0\`."
echo
} > "$md"

if command -v mpicc.openmpi >/dev/null; then
	sh examples/build.sh "$out/ex-openmpi" openmpi >/dev/null 2>&1
	lib=$("$bin" build --mpicc mpicc.openmpi)
	{
	echo "### Real runs: rank 0's finalize (Open MPI, \`balanced 20 1\`, $rounds rounds, medians)"
	echo
	echo "Finalize time runs from rank 0's entry into \`MPI_Finalize\` to the file written (handshake included);"
	echo "RSS growth is rank 0's peak resident set after minus before."
	echo
	echo "| P | full: finalize ms | summary: finalize ms | ratio | full: RSS growth KiB | summary: RSS growth KiB |"
	echo "|---:|---:|---:|---:|---:|---:|"
	} >> "$md"
	for p in 2 4 8 16; do
		for form in full summary; do
			: > "$out/fin-$form-$p.txt"
			for _ in $(seq $rounds); do
				limit=4096; [ $form = summary ] && limit=0
				POPMON_MAX_PROCESS_RECORDS=$limit POPMON_FINALIZE_STATS=1 POPMON_OUTPUT="$out/fin.json" \
					POPMON_OUTPUT_FORCE=1 POPMON_QUIET=1 LD_PRELOAD="$lib" \
					timeout 120 mpirun.openmpi --oversubscribe -x LD_PRELOAD -x POPMON_MAX_PROCESS_RECORDS \
					-x POPMON_FINALIZE_STATS -x POPMON_OUTPUT -x POPMON_OUTPUT_FORCE -x POPMON_QUIET \
					-np $p "$out/ex-openmpi/balanced" 20 1 2>&1 >/dev/null | grep "popmon: finalize" >> "$out/fin-$form-$p.txt" || true
			done
		done
		fm=$(awk '{print $3}' "$out/fin-full-$p.txt" | median)
		sm=$(awk '{print $3}' "$out/fin-summary-$p.txt" | median)
		fr=$(sed 's/.*(+\([0-9]*\) KiB).*/\1/' "$out/fin-full-$p.txt" | median)
		sr=$(sed 's/.*(+\([0-9]*\) KiB).*/\1/' "$out/fin-summary-$p.txt" | median)
		awk -v p=$p -v f="$fm" -v s="$sm" -v fr="$fr" -v sr="$sr" \
			'BEGIN {printf "| %d | %.2f | %.2f | %.2f× | %d | %d |\n", p, f, s, s/f, fr, sr}' >> "$md"
	done
	echo >> "$md"
fi

cc -std=c11 -O2 -D_GNU_SOURCE -Ishim shim/base/*.c shim/reduce.c shim/test/reduce_test.c -lm -ldl -lpthread -o "$out/reduce_test"
{
echo "### The reduction simulated in one process (100 regions)"
echo
echo "\`reduce_test bench P 100\`: the measured cost of one combination of 100 region summaries (what each"
echo "step of the MPI reduction tree computes), times the tree's depth ⌈log₂ P⌉ = rank 0's computation on the"
echo "critical path (the network's latency per step comes on top); rank 0's bytes: 2 × 100 summaries in the"
echo "summary form, P × (process record + 100 region records) × 2 (receive buffer and copy) in the full form."
echo
echo "| P | combine µs | depth | critical path ms | rank 0 bytes, summary | rank 0 bytes, full | ratio |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
} >> "$md"
for p in 1000 10000 100000 1000000; do
	"$out/reduce_test" bench $p 100 | tr ' =' '\n\n' | awk 'NR%2==0' | paste -sd' ' |
		awk '{printf "| %d | %.2f | %d | %.3f | %.0f | %.0f | %.0f× |\n", $1, $3, $4, $5, $6, $7, $7/$6}' >> "$md"
done
echo >> "$md"

go build -o "$out/benchgen" ./scripts/benchgen
{
echo "### popmon report and scaling on synthetic measurements (P ranks × 100 regions)"
echo
echo "\`scripts/benchgen\` writes the file; \`popmon report\` (text, model talp) and \`popmon scaling\` of the file"
echo "with itself; wall time and peak RSS (GNU time). Target: ≤ 2 s and memory independent of P in summary form."
echo
echo "| P | form | file MB | report s | report peak MiB | scaling s | scaling peak MiB |"
echo "|---:|---|---:|---:|---:|---:|---:|"
} >> "$md"
measure_cmd() { /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1; }
for spec in "1000 full" "10000 full" "1000 summary" "10000 summary" "100000 summary" "1000000 summary"; do
	set -- $spec
	f="$out/synth-$1-$2.json"
	"$out/benchgen" -ranks $1 -regions 100 -form $2 -o "$f"
	read -r rs rm < <(measure_cmd "$bin" report "$f")
	read -r ss sm < <(measure_cmd "$bin" scaling "$f" "$f")
	mb=$(du -m "$f" | cut -f1)
	awk -v p=$1 -v form=$2 -v mb="$mb" -v rs="$rs" -v rm="$rm" -v ss="$ss" -v sm="$sm" \
		'BEGIN {printf "| %d | %s | %d | %.2f | %.0f | %.2f | %.0f |\n", p, form, mb, rs, rm/1024, ss, sm/1024}' >> "$md"
	rm -f "$f"
done
echo >> "$md"
cat "$md"
