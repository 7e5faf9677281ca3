#!/bin/sh
# gpu-validate.sh: validates popmon's GPU (CUDA) metrics on a machine with an
# NVIDIA GPU, in one command: builds popmon and examples/gpu/gpu_pop.cu, runs
# the scenarios V1-V8 (examples/gpu/README.md) under `popmon run --gpu on`,
# prints measured against expected values with PASS/FAIL, and measures the
# cost per CUDA runtime call and per kernel launch next to an uninstrumented
# run.
#
# Needs:
#   - an NVIDIA GPU of compute capability 7.0 or newer (the kernel uses
#     __nanosleep) with its driver (libcuda.so.1, nvidia-smi); with one GPU,
#     V6 and V7 run 2 processes on it, so its compute mode must not be
#     Exclusive_Process (nvidia-smi -q | grep -i 'compute mode');
#   - the CUDA toolkit 11.8 or newer: nvcc, and CUPTI (libcupti.so on the
#     loader path, in $CUDA_HOME/extras/CUPTI/lib64, or named by
#     POPMON_CUPTI_LIBRARY);
#   - an MPI with mpicc, mpicxx and mpirun (Open MPI or MPICH);
#   - Go (1.22 or newer) to build popmon from this tree, or POPMON naming a
#     popmon binary;
#   - POSIX sh, awk, sed, grep.
#
# Usage: scripts/gpu-validate.sh [options]
#   --mpi openmpi|mpich  use mpicc.openmpi, mpicxx.openmpi, mpirun.openmpi
#                        (or the .mpich ones); default: $MPICC, $MPICXX,
#                        $MPIRUN, else mpicc, mpicxx, mpirun
#   --reps R             repetitions per scenario (default 3)
#   --unit MS            the time unit u of the scenarios (default 100)
#   --only LIST          scenarios to run, e.g. V1,V6 (default V1,...,V8; V8
#                        needs 2 GPUs and is skipped with one)
#   --launches N         calls and launches timed for the overhead (default
#                        100000; 0 skips the overhead measurement)
#   --out DIR            keep the builds, measurements, reports and logs in
#                        DIR (default: a temporary folder, removed at the end)
#   --fake               no GPU needed: use the fake CUDA stack of
#                        examples/gpu/fake instead of CUDA (tests this script)
#   --compare EXPECT CSV only compare a run's "expect" lines (EXPECT, the
#                        program's output) with a `popmon report --format csv`
#                        (CSV); used by the tests
# Environment: NVCC (default nvcc), NVCC_ARCH (default native), NVCC_FLAGS,
# CUDA_HOME (default /usr/local/cuda), POPMON, MPICC, MPICXX, MPIRUN.
#
# Output: a line per expected value (scenario, metric, expected ± tolerance,
# measured, PASS or FAIL), the overhead table, and a summary. Exit status: 0
# when every value passes, 1 when one fails or a run fails, 2 on a usage
# error, 3 when something needed is missing.
set -eu

usage() {
	sed -n '/^# Usage:/,/^# Environment:/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

die() {
	echo "gpu-validate: $*" >&2
	exit 3
}

# compare EXPECT CSV LABEL: prints one line per "expect REGION METRIC VALUE
# TOL" line of EXPECT against the CSV report's value; returns 1 when one is
# absent or outside VALUE ± TOL.
compare() {
	awk -v label="$3" '
		FNR == NR {
			if (FNR > 1) {
				n = split($0, f, ",")
				if (n >= 3)
					v[f[1] "/" f[2]] = f[n]
			}
			next
		}
		$1 == "expect" && NF == 5 {
			k = $2 "/" $3
			total++
			if (!(k in v)) {
				printf "%-12s %-30s %8.3f ± %-6.3g %9s  FAIL\n", label, $3, $4, $5, "absent"
				bad++
				next
			}
			d = v[k] - $4
			if (d < 0)
				d = -d
			ok = d <= $5 + 1e-9
			if (!ok)
				bad++
			printf "%-12s %-30s %8.3f ± %-6.3g %9.3f  %s\n", label, $3, $4, $5, v[k], ok ? "PASS" : "FAIL"
		}
		END {
			if (total == 0) {
				printf "%-12s no expected values\n", label
				exit 1
			}
			exit bad > 0
		}
	' "$2" "$1"
}

reps=3 unit=100 only="V1,V2,V3,V4,V5,V6,V7,V8" launches=100000 out="" fake=0 mpi=""
while [ $# -gt 0 ]; do
	case "$1" in
	--mpi | --reps | --unit | --only | --launches | --out)
		[ $# -ge 2 ] || usage
		case "$1" in
		--mpi) mpi=$2 ;;
		--reps) reps=$2 ;;
		--unit) unit=$2 ;;
		--only) only=$2 ;;
		--launches) launches=$2 ;;
		--out) out=$2 ;;
		esac
		shift 2
		;;
	--fake)
		fake=1
		shift
		;;
	--compare)
		[ $# -eq 3 ] || usage
		[ -r "$2" ] && [ -r "$3" ] || die "cannot read $2 or $3"
		compare "$2" "$3" "-"
		exit $?
		;;
	-h | --help) usage ;;
	*)
		echo "gpu-validate: unknown argument '$1'" >&2
		usage
		;;
	esac
done

case "$reps" in '' | *[!0-9]* | 0) echo "gpu-validate: --reps wants a positive integer" >&2 && usage ;; esac
case "$unit" in '' | *[!0-9]* | 0) echo "gpu-validate: --unit wants a positive integer (ms)" >&2 && usage ;; esac
case "$launches" in '' | *[!0-9]*) echo "gpu-validate: --launches wants an integer" >&2 && usage ;; esac
modes=$(echo "$only" | tr ',' ' ')
for m in $modes; do
	case "$m" in V[1-8]) ;; *) echo "gpu-validate: unknown scenario '$m' (V1 ... V8)" >&2 && usage ;; esac
done
[ -n "$modes" ] || usage
case "$mpi" in
openmpi | mpich)
	MPICC=mpicc.$mpi MPICXX=mpicxx.$mpi MPIRUN=mpirun.$mpi
	;;
"")
	MPICC=${MPICC:-mpicc} MPICXX=${MPICXX:-mpicxx} MPIRUN=${MPIRUN:-mpirun}
	;;
*) echo "gpu-validate: --mpi openmpi or mpich" >&2 && usage ;;
esac
mpirun_flags=""
if "$MPIRUN" --version 2>/dev/null | grep -q 'Open MPI\|OpenRTE'; then
	mpirun_flags="--oversubscribe"
	if [ "$(id -u)" = 0 ]; then
		export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	fi
fi

root=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "$out" ]; then
	mkdir -p "$out"
	dir=$(cd "$out" && pwd)
else
	dir=$(mktemp -d "${TMPDIR:-/tmp}/gpu-validate.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
fi

for tool in "$MPICC" "$MPIRUN" awk; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found (see the needs at the top of $0)"
done

# ---- the machine --------------------------------------------------------
if [ "$fake" = 1 ]; then
	echo "== fake CUDA stack (examples/gpu/fake): no GPU is used"
	command -v "${CC:-cc}" >/dev/null 2>&1 || die "${CC:-cc} not found"
	sh "$root/examples/gpu/fake/build.sh" "$dir/fake" "$MPICC" >"$dir/build.log" 2>&1 ||
		die "building the fake stack failed: see $dir/build.log"
	prog=$dir/fake/gpu_pop
	LD_LIBRARY_PATH=$dir/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	POPMON_CUPTI_LIBRARY=$dir/fake/libcupti.so
	export LD_LIBRARY_PATH POPMON_CUPTI_LIBRARY
	ngpu=1
else
	NVCC=${NVCC:-nvcc}
	CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
	command -v nvidia-smi >/dev/null 2>&1 || die "nvidia-smi not found: no NVIDIA driver"
	command -v "$NVCC" >/dev/null 2>&1 || [ -x "$CUDA_HOME/bin/nvcc" ] || die "nvcc not found: install the CUDA toolkit or set NVCC"
	command -v "$NVCC" >/dev/null 2>&1 || NVCC=$CUDA_HOME/bin/nvcc
	command -v "$MPICXX" >/dev/null 2>&1 || die "$MPICXX not found"
	echo "== machine"
	nvidia-smi --query-gpu=index,name,driver_version,compute_mode,uuid --format=csv,noheader || die "nvidia-smi failed"
	ngpu=$(nvidia-smi -L | grep -c '^GPU')
	[ "$ngpu" -ge 1 ] || die "no GPU found by nvidia-smi"
	"$NVCC" --version | tail -n 2
	# Which CUPTI libpopmon will use: POPMON_CUPTI_LIBRARY alone when set,
	# else its search (the loader path, then CUDA_HOME); see popmon doctor.
	echo "POPMON_CUPTI_LIBRARY: ${POPMON_CUPTI_LIBRARY:-not set}; CUPTI under CUDA_HOME:"
	ls "$CUDA_HOME"/extras/CUPTI/lib64/libcupti.so* "$CUDA_HOME"/lib64/libcupti.so* 2>/dev/null || echo "  none"
	echo "MPI: $("$MPIRUN" --version 2>&1 | head -n 1)"
	prog=$dir/gpu_pop
	# shellcheck disable=SC2086 # NVCC_FLAGS is a list of flags
	"$NVCC" -O2 -arch="${NVCC_ARCH:-native}" ${NVCC_FLAGS:-} -ccbin "$MPICXX" \
		-I"$root/shim" -I"$root/examples/gpu" -o "$prog" "$root/examples/gpu/gpu_pop.cu" \
		>"$dir/build.log" 2>&1 || {
		cat "$dir/build.log" >&2
		die "building gpu_pop.cu failed"
	}
fi

if [ -n "${POPMON:-}" ]; then
	[ -x "$POPMON" ] || die "POPMON=$POPMON is not executable"
	popmon=$POPMON
else
	command -v go >/dev/null 2>&1 || die "go not found: install Go or set POPMON to a popmon binary"
	popmon=$dir/popmon
	(cd "$root" && CGO_ENABLED=0 go build -o "$popmon" ./cmd/popmon) || die "building popmon failed"
fi
echo "using $("$popmon" version 2>/dev/null || echo "$popmon") ($popmon)"
"$popmon" doctor --mpicc "$MPICC" >"$dir/doctor.txt" 2>&1 || true
grep -i 'gpu\|cuda\|cupti' "$dir/doctor.txt" || true

# ---- the scenarios ------------------------------------------------------
runs=0 fails=0
# scenario LABEL NP MODE [VAR=VALUE ...]: one measured run and its comparison.
scenario() {
	label=$1 np=$2 mode=$3
	shift 3
	f=$dir/$label
	runs=$((runs + 1))
	# shellcheck disable=SC2086 # mpirun_flags is a list of flags
	if ! env "$@" "$popmon" run --gpu on --mpicc "$MPICC" --format none --force -o "$f.json" -- \
		"$MPIRUN" $mpirun_flags -np "$np" "$prog" "$mode" "$reps" "$unit" >"$f.out" 2>"$f.err"; then
		printf "%-12s run failed  FAIL (%s)\n" "$label" "$f.err"
		sed 's/^/    /' "$f.err" | tail -n 5
		fails=$((fails + 1))
		return 0
	fi
	grep -v '^popmon: measurement written' "$f.err" | grep 'popmon: .*\(GPU\|CUDA\|CUPTI\)' |
		sed "s/^/$label: /" || true
	grep '^expect ' "$f.out" >"$f.expect" || true
	"$popmon" report --format csv --region work "$f.json" >"$f.csv" 2>>"$f.err" || true
	# The report's GPU: line (devices, CUPTI and driver versions, clock,
	# dropped or rejected records), whenever it differs from the last one.
	gpu_line=$("$popmon" report "$f.json" 2>/dev/null | grep '^GPU:' || true)
	if [ "$gpu_line" != "${last_gpu_line:-}" ]; then
		printf "%-12s %s\n" "$label" "$gpu_line"
		last_gpu_line=$gpu_line
	fi
	compare "$f.expect" "$f.csv" "$label" || fails=$((fails + 1))
	sed -n 's/^ok .*copy_ms=\([0-9.]*\).*/  (measured copy time c = \1 ms)/p' "$f.out"
}

echo
printf "%-12s %-30s %-17s %9s  %s\n" scenario metric "expected ± tol" measured result
for m in $modes; do
	case $m in
	V6 | V7)
		if [ "$fake" = 1 ]; then
			scenario "$m-2gpus" 2 "$m" FAKECUDA_DEVICES=2
			scenario "$m-shared" 2 "$m" FAKECUDA_DEVICES=1
			scenario "$m-distinct" 2 "$m" FAKECUDA_DEVICES=1 POPMON_GPU_TEST_DISTINCT_DEVICE_PER_RANK=1
		elif [ "$ngpu" -ge 2 ]; then
			scenario "$m-2gpus" 2 "$m"
			scenario "$m-shared" 2 "$m" CUDA_VISIBLE_DEVICES=0
		else
			scenario "$m-shared" 2 "$m"
			scenario "$m-distinct" 2 "$m" POPMON_GPU_TEST_DISTINCT_DEVICE_PER_RANK=1
		fi
		;;
	V8)
		if [ "$fake" = 1 ]; then
			scenario "$m" 1 "$m" FAKECUDA_DEVICES=2
		elif [ "$ngpu" -ge 2 ]; then
			scenario "$m" 1 "$m"
		else
			echo "V8           skipped: needs 2 GPUs"
		fi
		;;
	*) scenario "$m" 1 "$m" ;;
	esac
done

# ---- overhead -----------------------------------------------------------
# overhead WHAT [popmon run flags]: prints "CALL_NS LAUNCH_NS" of one run.
overhead() {
	what=$1
	shift
	# shellcheck disable=SC2086 # mpirun_flags is a list of flags
	if [ "$what" = plain ]; then
		"$MPIRUN" $mpirun_flags -np 1 "$prog" overhead "$launches" >"$dir/overhead-$what.out" 2>&1 || true
	else
		"$popmon" run "$@" --mpicc "$MPICC" --format none --force -o "$dir/overhead-$what.json" -- \
			"$MPIRUN" $mpirun_flags -np 1 "$prog" overhead "$launches" >"$dir/overhead-$what.out" 2>&1 || true
	fi
	sed -n 's/^overhead call_ns=\([0-9.]*\) launch_ns=\([0-9.]*\)$/\1 \2/p' "$dir/overhead-$what.out"
}

if [ "$launches" -gt 0 ]; then
	runs=$((runs + 1))
	plain=$(overhead plain)
	off=$(overhead off --gpu off)
	on=$(overhead on --gpu on)
	echo
	echo "overhead, mean of $launches calls (ns): uninstrumented | popmon --gpu off | popmon --gpu on | added by GPU measurement"
	if [ -z "$plain" ] || [ -z "$off" ] || [ -z "$on" ]; then
		echo "  overhead runs failed: see $dir/overhead-*.out"
		fails=$((fails + 1))
	else
		echo "$plain $off $on" | awk '{
			printf "  runtime call (cudaGetDevice)  %10.1f %10.1f %10.1f %+10.1f\n", $1, $3, $5, $5 - $1
			printf "  kernel launch (empty <<<1,1>>>) %8.1f %10.1f %10.1f %+10.1f\n", $2, $4, $6, $6 - $2
		}'
	fi
fi

echo
if [ "$fails" -eq 0 ]; then
	echo "gpu-validate: all $runs runs PASS"
else
	if [ -n "$out" ]; then
		echo "gpu-validate: $fails of $runs runs with a FAIL (logs in $dir)"
	else
		echo "gpu-validate: $fails of $runs runs with a FAIL (pass --out DIR to keep the logs)"
	fi
	exit 1
fi
