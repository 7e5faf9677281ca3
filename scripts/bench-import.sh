#!/bin/bash
# Trace import throughput and memory (issue 5), side by side with the
# disk/decompression ceiling in the same run. Writes the section to
# build/bench/import.md (bench.sh appends it to BENCHMARKS.md).
#  - a ≥ 1 GB trace: the 16-rank EPOCH trace replicated with shifted times
#    (bench/gentrace), plain and gzip -6, plus a 4× smaller one to show that
#    memory does not grow with the trace;
#  - 3 rounds each, medians, files read once before (page cache warm for all).
set -euo pipefail
bin=${1:-bin/popmon}
out=build/bench
dir=${POPMON_BENCH_TRACE_DIR:-$out/trace}
mkdir -p "$out" "$dir"
go=$(command -v go || echo /usr/local/go/bin/go)
src=internal/paraver/testdata/epoch_16proc.prv.gz
rounds=3
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

[ -s "$dir/big.prv" ] || "$go" run ./bench/gentrace -o "$dir/big.prv" -size 1.1e9 "$src"
[ -s "$dir/big.prv.gz" ] || gzip -6 -k "$dir/big.prv"
[ -s "$dir/quarter.prv" ] || "$go" run ./bench/gentrace -o "$dir/quarter.prv" -size 2.75e8 "$src"
text=$(stat -c %s "$dir/big.prv")
qtext=$(stat -c %s "$dir/quarter.prv")
gz=$(stat -c %s "$dir/big.prv.gz")
cat "$dir/big.prv" "$dir/big.prv.gz" "$dir/quarter.prv" > /dev/null # warm the page cache

# measure LABEL CMD...: appends "wall cpu maxrss_kb" to $out/imp-LABEL.txt
measure() {
	local label=$1; shift
	/usr/bin/time -f "%e %U %S %M" -o "$out/time.txt" bash -c "$*" > /dev/null 2>&1
	awk '{printf "%s %.3f %d\n", $1, $2+$3, $4}' "$out/time.txt" >> "$out/imp-$label.txt"
}
for l in cat zcat plain gz quarter; do : > "$out/imp-$l.txt"; done
for _ in $(seq $rounds); do
	measure cat "cat '$dir/big.prv' | wc -l"
	measure zcat "zcat '$dir/big.prv.gz' | wc -l"
	rm -f "$out/imp.json"; measure plain "'$bin' import -o '$out/imp.json' '$dir/big.prv'"
	rm -f "$out/imp.json"; measure gz "'$bin' import -o '$out/imp.json' '$dir/big.prv.gz'"
	rm -f "$out/imp.json"; measure quarter "'$bin' import -o '$out/imp.json' '$dir/quarter.prv'"
done
rm -f "$out/imp.json"
row() { # label name bytes
	local w c r
	w=$(awk '{print $1}' "$out/imp-$1.txt" | median)
	c=$(awk '{print $2}' "$out/imp-$1.txt" | median)
	r=$(awk '{print $3}' "$out/imp-$1.txt" | median)
	awk -v n="$2" -v b="$3" -v w="$w" -v c="$c" -v r="$r" 'BEGIN {
		pc = (c > 0) ? sprintf("%.0f", b/1e6/c) : "—"
		printf "| %s | %.2f | %.2f | %.0f | %s | %.1f |\n", n, w, c, b/1e6/w, pc, r/1024 }'
}
{
echo
echo "## Trace import"
echo
echo "\`scripts/bench-import.sh\` (part of \`make bench\`): a $(awk -v b="$text" 'BEGIN {printf "%.2f", b/1e9}') GB Paraver trace (the 16-rank EPOCH trace of"
echo "internal/paraver/testdata replicated about $(( (text + 7000000) / $(zcat "$src" | wc -c) )) times with shifted times by \`go run ./bench/gentrace\`;"
echo "$(awk -v b="$gz" 'BEGIN {printf "%.0f", b/1e6}') MB with \`gzip -6\`), page cache warm, medians of $rounds rounds. MB/s are of uncompressed"
echo ".prv text; *per core* divides by CPU time (user + system), *wall* by elapsed time. The ceiling rows"
echo "read the same files with \`cat | wc -l\` and \`zcat | wc -l\`. Target: ≥ 200 MB/s per core, flat memory."
echo
echo "| command | wall s | CPU s | MB/s wall | MB/s per core | peak RSS MB |"
echo "|---|---:|---:|---:|---:|---:|"
row cat "ceiling: \`cat big.prv \\| wc -l\`" "$text"
row plain "\`popmon import big.prv\`" "$text"
row zcat "ceiling: \`zcat big.prv.gz \\| wc -l\`" "$text"
row gz "\`popmon import big.prv.gz\`" "$text"
row quarter "\`popmon import quarter.prv\` (¼ of the text)" "$qtext"
echo
echo "Peak memory is the same for a trace 4× smaller: the reader keeps per-thread accounts, one record and"
echo "fixed buffers. A gzip trace is decompressed on a second core while the first parses, so its wall time"
echo "is Go's gzip decoding, and CPU time per MB includes the decompression."
} > "$out/import.md"
cat "$out/import.md"
