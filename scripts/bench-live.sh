#!/bin/bash
# Live-file costs for `make bench` (called by scripts/bench.sh, or alone:
# scripts/bench-live.sh [bin/popmon]); prints a BENCHMARKS.md section on
# stdout, raw numbers in build/bench/.
#  Cost per MPI call (MPI_Comm_rank on 1 rank, bench/mpicall.c) side by side
#  in one run, alternating, 7 rounds, medians, per MPI: libpopmon built
#  without the live file's sequence word (-DPOPMON_NO_LIVE_SEQ: the hot path
#  before live files, the baseline); libpopmon without a live file; with its
#  live file (POPMON_LIVE_DIR); with its live file and a reader at 10 Hz
#  (bench/liveread, what popmon run's sampler does at 4 Hz). The same rows
#  for a region start + stop (bench/regioncall.c). And the memory the live
#  file takes.
set -euo pipefail
bin=${1:-bin/popmon}
out=build/bench
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rounds=${ROUNDS:-7}
n=20000000
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
go=$(command -v go || echo /usr/local/go/bin/go)
"$go" build -o "$out/liveread" ./bench/liveread

echo
echo "## Live files: cost per MPI call"
echo
echo "Produced by \`scripts/bench-live.sh $bin\` (part of \`make bench\`), on the same machine and day."
echo "\`MPI_Comm_rank\` on 1 rank (bench/mpicall.c, 20 M calls: two state changes each) and a region start + stop"
echo "(bench/regioncall.c, 1 M pairs: the region lock and two snapshots of the accounts each), $rounds rounds alternating"
echo "between the rows, medians. The baseline is the same library built without the live file's sequence word"
echo "(\`-DPOPMON_NO_LIVE_SEQ\`: the hot path before live files). Budget: ≤ 2 ns added per MPI call and ≤ 1 µs"
echo "per region start + stop, with or without a reader."
echo
for mpi in openmpi mpich; do
	command -v "mpicc.$mpi" >/dev/null || continue
	"mpicc.$mpi" -O2 -o "$out/mpicall-$mpi" bench/mpicall.c
	"mpicc.$mpi" -O2 -Ishim -o "$out/regioncall-$mpi" bench/regioncall.c
	lib=$("$bin" build --mpicc "mpicc.$mpi")
	base=$(scripts/shim-variant.sh "$mpi" -DPOPMON_NO_LIVE_SEQ "$out/shim-noseq-$mpi")
	launch=("mpirun.$mpi" -np 1)
	# Node-local memory, as under popmon run.
	livedir="$out/live-$mpi"; [ -d /dev/shm ] && livedir="/dev/shm/popmon-bench-$mpi-$$"
	rows=(base lib live reader)
	for r in "${rows[@]}"; do : > "$out/live-$r-$mpi.txt"; : > "$out/region-$r-$mpi.txt"; done
	for _ in $(seq "$rounds"); do
		for r in "${rows[@]}"; do
			rm -rf "$livedir" && mkdir -m 700 "$livedir"
			rp=""
			if [ "$r" = reader ]; then
				"$out/liveread" "$livedir" 10 & rp=$!
			fi
			for prog in mpicall regioncall; do
				case $r in
				base) POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$base" "${launch[@]}" "$out/$prog-$mpi" ;;
				lib) POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" "${launch[@]}" "$out/$prog-$mpi" ;;
				*) POPMON_LIVE_DIR="$(realpath "$livedir")" POPMON_OUTPUT=/dev/null POPMON_QUIET=1 LD_PRELOAD="$lib" "${launch[@]}" "$out/$prog-$mpi" ;;
				esac 2>/dev/null
			done > "$out/live-raw.txt"
			grep ^comm_rank_ns "$out/live-raw.txt" | awk '{print $2}' >> "$out/live-$r-$mpi.txt"
			grep ^region_ns "$out/live-raw.txt" | awk '{print $2}' >> "$out/region-$r-$mpi.txt"
			if [ -n "$rp" ]; then kill "$rp"; wait "$rp" 2>/dev/null || true; fi
			if [ "$r" = live ]; then
				# The larger of the two programs' files (1 thread, Global and one region).
				f=$(ls -S "$livedir"/*.live 2>/dev/null | head -1)
				[ -n "$f" ] && du -k "$livedir"/*.live | sort -n | tail -1 | awk '{print $1}' > "$out/live-kib-$mpi.txt"
				[ -n "$f" ] && stat -c %s "$f" > "$out/live-size-$mpi.txt"
			fi
		done
	done
	echo "**$mpi**"
	echo
	echo "| library | ns/MPI call | added | ratio | ns/region start+stop | added | ratio |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	b=$(median < "$out/live-base-$mpi.txt")
	rb=$(median < "$out/region-base-$mpi.txt")
	for r in "${rows[@]}"; do
		v=$(median < "$out/live-$r-$mpi.txt")
		rv=$(median < "$out/region-$r-$mpi.txt")
		case $r in
		base) label="libpopmon without the sequence word (baseline)" ;;
		lib) label="libpopmon, no live file" ;;
		live) label="libpopmon with its live file in ${livedir%/*}" ;;
		reader) label="with its live file and a reader at 10 Hz" ;;
		esac
		awk -v l="$label" -v v="$v" -v b="$b" -v rv="$rv" -v rb="$rb" 'BEGIN {printf "| %s | %.1f | %+.1f | %.2f× | %.0f | %+.0f | %.2f× |\n", l, v, v-b, v/b, rv, rv-rb, rv/rb}'
	done
	echo
	if [ -s "$out/live-kib-$mpi.txt" ]; then
		echo "Memory of the live file of a 1-thread process: $(cat "$out/live-kib-$mpi.txt") KiB used of a sparse file of"
		echo "$(awk '{printf "%.0f", $1/1048576}' "$out/live-size-$mpi.txt") MiB (header, one thread record, Global and one region, the function names)."
		echo
	fi
	rm -rf "$livedir"
done
