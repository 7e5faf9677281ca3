#!/bin/bash
# bench-apps.sh [POPMON]: real applications from Debian's packages measured with popmon and plain,
# side by side, rounds interleaved (plain and popmon alternate, their order swapped every round).
# Run by hand, as root on a Debian 12 machine (it installs the packages with apt-get when they are
# missing); the results go into BENCHMARKS.md's "Real applications" section. Not part of `make bench`.
#
# Cases (inputs in bench/apps/, all Open MPI: Debian builds these programs against it):
#   hpcc 2x1      HPC Challenge, N=2000, P=2 Q=1 (its RandomAccess polls with MPI_Test/MPI_Testany)
#   lammps 2x1    LAMMPS's Lennard-Jones benchmark, 16 384 atoms, 100 steps (Debian's LAMMPS has no
#                 OPENMP package, so it has no 1x2 shape)
#   qe 2x1        Quantum ESPRESSO pw.x, an 8-atom silicon cell, SCF (Debian's pw.x has no OpenMP)
#   cp2k 2x1      CP2K (cp2k.psmp), two water molecules, PBE, one energy
#   cp2k 1x2      the same, one rank with two OpenMP threads (GCC's libgomp)
# For each case: the medians of the wall time (plain, popmon, ratio), the application's own timer
# (plain, popmon, ratio: HPCC's MPIRandomAccess_time, LAMMPS's loop time, pw.x's WALL, CP2K's total
# time), and popmon's efficiencies of the last popmon round (parallel, communication, load balance,
# OpenMP parallel efficiency where the case has threads) with its report's OpenMP line (which runtime
# measured OpenMP, and how). ROUNDS (default 3) rounds; CASES selects cases (default all, e.g.
# CASES="hpcc cp2k-1x2"); POPMON_ARGS adds options to `popmon run` (e.g. --openmp=libomp).
# Scratch in build/apps.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bin=$(realpath "${1:-bin/popmon}")
rounds=${ROUNDS:-3}
cases=${CASES:-"hpcc lammps-2x1 qe-2x1 cp2k-2x1 cp2k-1x2"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1

need=
command -v hpcc >/dev/null || need="$need hpcc"
command -v lmp >/dev/null || need="$need lammps"
command -v pw.x >/dev/null || need="$need quantum-espresso"
[ -d /usr/share/doc/quantum-espresso/examples ] || need="$need quantum-espresso-data"
command -v cp2k.psmp >/dev/null || need="$need cp2k"
if [ -n "$need" ]; then
	[ "$(id -u)" = 0 ] || { echo "bench-apps.sh: install$need (apt-get install$need)" >&2; exit 2; }
	apt-get install -y -q $need >/dev/null
fi

out=$root/build/apps
rm -rf "$out"
mkdir -p "$out"
cp bench/apps/* "$out/"
zcat /usr/share/doc/quantum-espresso/examples/EPW/sic/pp/Si.pz-vbc.UPF.gz > "$out/Si.pz-vbc.UPF"
cd "$out"
"$bin" build --mpicc mpicc.openmpi >/dev/null # the library is built once, outside the timings

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# command CASE: the case's shape (ranks threads) and command line.
command_of() {
	case $1 in
	hpcc) echo "2 1 mpirun -np 2 hpcc" ;;
	lammps-2x1) echo "2 1 mpirun -np 2 lmp -in lj.in -log none" ;;
	qe-2x1) echo "2 1 mpirun -np 2 pw.x -in si.scf.in" ;;
	cp2k-2x1) echo "2 1 mpirun -np 2 cp2k.psmp -i h2o.inp" ;;
	cp2k-1x2) echo "1 2 mpirun -np 1 cp2k.psmp -i h2o.inp" ;;
	*) echo "bench-apps.sh: unknown case $1" >&2; exit 2 ;;
	esac
}

# own_timer CASE LOG: the application's own timer of the run whose output is LOG, in seconds.
own_timer() {
	case $1 in
	hpcc) sed -n 's/^MPIRandomAccess_time=//p' hpccoutf.txt | tail -1 ;;
	lammps-*) awk '/^Loop time of/ {print $4}' "$2" | tail -1 ;;
	qe-*) awk '/PWSCF.*WALL/ {for (i = 1; i <= NF; i++) if ($i == "WALL") {v = $(i-1)}} END {sub(/s$/, "", v); print v}' "$2" ;;
	cp2k-*) awk '$1 == "CP2K" && NF == 7 {print $7}' "$2" | tail -1 ;;
	esac
}

# run CASE MODE ROUND: one run, plain or under popmon; appends "wall own" to CASE-MODE.txt.
run() {
	local c=$1 mode=$2 r=$3 shape log t0 t1
	read -r -a shape <<< "$(command_of "$c")"
	log=$out/$c-$mode-$r.log
	rm -f hpccoutf.txt
	t0=$(date +%s.%N)
	if [ "$mode" = plain ]; then
		OMP_NUM_THREADS=${shape[1]} "${shape[@]:2}" > "$log" 2>&1
	else
		# shellcheck disable=SC2086
		OMP_NUM_THREADS=${shape[1]} "$bin" run ${POPMON_ARGS:-} -o "$out/$c-$r.json" -- "${shape[@]:2}" > "$log" 2>&1
	fi
	t1=$(date +%s.%N)
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}') $(own_timer "$c" "$log")" >> "$out/$c-$mode.txt"
}

for r in $(seq "$rounds"); do
	for c in $cases; do
		if [ $((r % 2)) = 1 ]; then
			run "$c" plain "$r"; run "$c" popmon "$r"
		else
			run "$c" popmon "$r"; run "$c" plain "$r"
		fi
	done
done

echo "| case | plain wall s | popmon wall s | wall ratio | app timer plain s | app timer popmon s | timer ratio | PE | CommE | LB | OpenMP PE | OpenMP measured by |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for c in $cases; do
	pw=$(awk '{print $1}' "$c-plain.txt" | median)
	qw=$(awk '{print $1}' "$c-popmon.txt" | median)
	pt=$(awk '{print $2}' "$c-plain.txt" | median)
	qt=$(awk '{print $2}' "$c-popmon.txt" | median)
	m=$("$bin" report --format json "$c-$rounds.json" | python3 -c '
import json, sys
m = json.load(sys.stdin)["regions"][0]["metrics"]
f = lambda k: "%.3f" % m[k] if k in m else "-"
print(f("parallel_efficiency"), f("mpi_communication_efficiency"), f("mpi_load_balance"), f("omp_parallel_efficiency"))')
	how=$("$bin" report "$c-$rounds.json" | sed -n 's/^OpenMP: *//p' | head -1)
	read -r pe ce lb ope <<< "$m"
	awk -v c="$c" -v pw="$pw" -v qw="$qw" -v pt="$pt" -v qt="$qt" -v pe="$pe" -v ce="$ce" -v lb="$lb" -v ope="$ope" -v how="${how:--}" 'BEGIN {
		printf "| %s | %.2f | %.2f | %.3f× | %.3f | %.3f | %.3f× | %s | %s | %s | %s | %s |\n", c, pw, qw, qw / pw, pt, qt, (pt > 0 ? qt / pt : 0), pe, ce, lb, ope, how
	}'
done
echo
echo "$rounds rounds, plain and popmon interleaved (order swapped every round); medians; efficiencies from the last round's measurement. $(nproc) CPUs, $(date -u +%Y-%m-%d)."
