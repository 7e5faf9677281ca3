#!/bin/bash
# The memory of popmon run's time series (`make bench`, or alone:
# scripts/bench-series.sh [bin/popmon [SECONDS [RANKS [REGIONS]]]]).
#  A real run: popmon run -- mpirun -np RANKS bench/manyregions SECONDS
#  REGIONS (defaults 90 s, 8 ranks, 4095 regions and Global: every region
#  visited by every rank every 250 ms, the densest series a job can have),
#  popmon's peak resident memory (VmHWM of /proc/PID/status, polled until
#  it exits), the largest private part of it (RssAnon) and the live files
#  it maps (RssShmem), and the measurement file's series and size.
#  The sampler driven through the real sampling code (files written, read
#  and sampled as popmon run does) over 60, 600 and 3,600 simulated 1-s
#  intervals, 8 ranks × 4096 regions (Go benchmark BenchmarkSeriesMemory,
#  internal/live/seriesbench_test.go): the peak live heap, checked every
#  50 intervals and at the end after a garbage collection.
# Prints a BENCHMARKS.md section on stdout, raw numbers in build/bench/.
# OLD=path/to/older/popmon adds that binary's real run, side by side.
set -euo pipefail
bin=${1:-bin/popmon}
secs=${2:-90}
ranks=${3:-8}
regions=${4:-4095}
out=build/bench
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
go=$(command -v go || echo /usr/local/go/bin/go)
mpi=openmpi
command -v mpicc.$mpi >/dev/null || mpi=mpich
"mpicc.$mpi" -O2 -Ishim -o "$out/manyregions-$mpi" bench/manyregions.c
"$go" build -o "$out/seriesinfo" ./bench/seriesinfo
launch=("mpirun.$mpi" -np "$ranks")
[ "$mpi" = openmpi ] && launch+=(--oversubscribe)

# real BIN LABEL: one popmon run, its row on stdout.
real() {
	local b=$1 label=$2 f="$out/series-$2.json" hwm=0 anon=0 shm=0 h a m
	rm -f "$f"
	"$b" run -o "$f" --format none -- "${launch[@]}" "$out/manyregions-$mpi" "$secs" "$regions" \
		>"$out/series-$label.log" 2>&1 &
	local pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if read -r h a m < <(awk '/^VmHWM/ {h=$2} /^RssAnon/ {a=$2} /^RssShmem/ {m=$2} END {print h, a, m}' "/proc/$pid/status" 2>/dev/null); then
			[ -n "$h" ] && hwm=$h
			[ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
			[ -n "$m" ] && [ "$m" -gt "$shm" ] && shm=$m
		fi
		sleep 0.2
	done
	wait "$pid" || { echo "popmon run failed ($label): $(tail -3 "$out/series-$label.log")" >&2; exit 1; }
	local ivs nreg entries iv size
	read -r ivs nreg entries iv < <("$out/seriesinfo" "$f")
	size=$(stat -c %s "$f")
	printf '| %s | %d | %d | %d | %d × %g s | %d | %d | %d |\n' "$label" $((hwm / 1024)) $((anon / 1024)) $((shm / 1024)) \
		"$ivs" "$(echo "$iv / 1000000000" | bc -l)" "$nreg" "$entries" $((size / 1048576))
}

echo
echo "## popmon run's memory: the time series"
echo
echo "Produced by \`scripts/bench-series.sh $bin $secs $ranks $regions\` (part of \`make bench\`)."
echo "A real run: \`popmon run -- mpirun -np $ranks bench/manyregions $secs $regions\` ($mpi; $regions regions and"
echo "Global, each visited by every rank every 250 ms: every region has time in every interval). popmon's peak"
echo "resident memory (VmHWM), the largest part of it that is popmon's own (RssAnon) and the live files it maps"
echo "(RssShmem: the ranks' own memory, shared), polled every 0.2 s; the series in the measurement file (Global's"
echo "intervals, the regions, the process accounts) and the file's size."
echo
echo "| popmon | peak RSS MiB | own MiB | live files MiB | Global's intervals | series regions | series accounts | file MiB |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
if [ -n "${OLD:-}" ]; then
	real "$OLD" old
fi
real "$bin" this
echo
echo "The sampler alone, driven through the real sampling code (\`go test -run '^\$' -bench SeriesMemory"
echo "-benchtime 1x ./internal/live/\`): 8 live files of 4096 regions written in place, read and sampled"
echo "once per simulated 1-s interval, every region's accounts changing in every interval; the live heap's"
echo "peak (after a garbage collection every 50 intervals and once the series is built) and the series."
echo
echo "| intervals | peak live heap MiB | series accounts | Global's intervals | series regions |"
echo "|---:|---:|---:|---:|---:|"
"$go" test -count=1 -run '^$' -bench 'SeriesMemory' -benchtime 1x -timeout 60m ./internal/live/ >"$out/series-go.txt"
awk '/^BenchmarkSeriesMemory/ {
	n = $1; sub(/.*intervals=/, "", n); sub(/-[0-9]+$/, "", n)
	for (i = 2; i < NF; i++) v[$(i + 1)] = $i
	printf "| %s | %.0f | %d | %d | %d |\n", n, v["peak-heap-MiB"], v["entries"], v["intervals"], v["regions"]
}' "$out/series-go.txt"
