#!/bin/sh
# gpu-validate.sh: validates popmon's GPU metrics on a machine with an NVIDIA
# GPU (CUDA, measured through CUPTI) or, with --vendor amd, an AMD GPU (HIP,
# measured through rocprofiler-sdk), in one command: builds popmon and
# examples/gpu/gpu_pop.cu (AMD: examples/gpu/gpu_pop_hip.cpp, the same
# program through hipcc), runs the scenarios V1-V13 (examples/gpu/README.md)
# and the OpenACC one (ACC: examples/openacc/acc_pop.c)
# under `popmon run --gpu on`, prints measured against expected values with
# PASS/FAIL, and measures the cost per runtime call, per kernel launch and per
# launch of a launch-bound loop: uninstrumented, under popmon --gpu off and
# on, with CUPTI's activity records alone (NVIDIA only:
# examples/gpu/floor/cupti_floor.c, the floor of any CUPTI-based tool), and,
# when a Python with PyTorch on the GPU is found, a PyTorch loop plain, under
# popmon and under torch.profiler.
#
# Needs, on an NVIDIA machine (the default, --vendor nvidia):
#   - an NVIDIA GPU of compute capability 7.0 or newer (the kernel uses
#     __nanosleep) with its driver (libcuda.so.1, nvidia-smi); with one GPU,
#     V6 and V7 run 2 processes on it, so its compute mode must not be
#     Exclusive_Process (nvidia-smi -q | grep -i 'compute mode');
#   - the CUDA toolkit 11.8 or newer: nvcc, and CUPTI (libcupti.so on the
#     loader path, in $CUDA_HOME/extras/CUPTI/lib64 or $CUDA_HOME/lib64, or
#     named by POPMON_CUPTI_LIBRARY);
#   - an MPI with mpicc, mpicxx and mpirun (Open MPI or MPICH);
#   - a C compiler ($CC, default cc) for the floor tool;
#   - Go (1.22 or newer) to build popmon from this tree, or POPMON naming a
#     popmon binary;
#   - POSIX sh, awk, sed, grep;
#   - optional: PyTorch with CUDA, for the PyTorch rows ($PYTHON, else
#     python3 on the PATH, else /opt/torch/.venv/bin/python3).
#
# Needs, on an AMD machine (--vendor amd):
#   - an AMD GPU that ROCm supports, with the amdgpu driver (/dev/kfd); with
#     one GPU, V6 and V7 run 2 processes on it;
#   - ROCm 6.2 or newer under $ROCM_PATH (default /opt/rocm): the HIP
#     runtime (libamdhip64.so), rocprofiler-sdk (librocprofiler-sdk.so, the
#     rocprofiler-sdk package: how popmon measures HIP programs), hipcc
#     (HIPCC, else hipcc on the PATH, else $ROCM_PATH/bin/hipcc) and rocminfo
#     (counts the GPUs); rocm-smi or amd-smi for the machine report
#     (optional); no other rocprofiler-sdk tool (rocprofv3, ROCP_TOOL_LIBRARIES)
#     in the environment; host-to-device copies on the DMA engines, as by
#     default (not HSA_ENABLE_SDMA=0);
#   - an MPI with mpicc, mpicxx and mpirun (Open MPI or MPICH): gpu_pop_hip
#     is built by mpicxx with hipcc as its compiler (OMPI_CXX, MPICH_CXX);
#   - Go (1.22 or newer) to build popmon from this tree, or POPMON naming a
#     popmon binary (a static bin/popmon built elsewhere will do);
#   - a C compiler ($CC, default cc), POSIX sh, awk, sed, grep;
#   - optional: PyTorch for ROCm, for the PyTorch rows (as above).
# There is no floor tool for AMD (a rocprofiler-sdk tool that keeps kernel
# records and nothing else is not written): the overhead table has no floor
# row, and popmon's launch costs are compared with the uninstrumented
# program, not judged.
#
# Usage: scripts/gpu-validate.sh [options]
#   --vendor nvidia|amd  the GPUs to validate: NVIDIA (CUDA, the default) or
#                        AMD (HIP, ROCm)
#   --mpi openmpi|mpich  use mpicc.openmpi, mpicxx.openmpi, mpirun.openmpi
#                        (or the .mpich ones); default: $MPICC, $MPICXX,
#                        $MPIRUN, else mpicc, mpicxx, mpirun
#   --reps R             repetitions per scenario (default 3)
#   --unit MS            the time unit u of the scenarios (default 100)
#   --only LIST          scenarios to run, e.g. V1,V6 (default V1,...,V13,C,ACC;
#                        V8 needs 2 GPUs and is skipped with one; V9 runs
#                        from 1 and from 4 host threads; C, the device
#                        counters, needs ncu (Nsight Compute, with the CUDA
#                        toolkit) on a GPU and is NVIDIA only; V11-V13, device
#                        communication (an NCCL-named kernel, a device-to-
#                        device copy, MPI moving device buffers), and ACC are
#                        NVIDIA only; V13 needs a CUDA-aware MPI: it runs when
#                        ompi_info says Open MPI was built with CUDA, or with
#                        GPU_VALIDATE_CUDA_AWARE=1, else it is skipped; ACC
#                        needs an OpenACC compiler for the GPU: ACC_CC (default
#                        nvc, NVIDIA HPC SDK) with ACC_FLAGS (default
#                        -acc=gpu), as the MPI wrapper's compiler; on the
#                        fake stack, GCC's -fopenacc host fallback)
#   --launches N         V9's kernel launches in all (default 1000000)
#   --overhead N         calls and launches timed per overhead row (default
#                        100000; 0 skips the overhead table)
#   --rounds R           runs per overhead row, interleaved; the table has
#                        each column's median (default 3: one run of 10^5
#                        launches on an H200 moved by up to 1.5 µs per launch
#                        between two runs of the same configuration)
#   --out DIR            keep the builds, measurements, reports and logs in
#                        DIR (default: a temporary folder, removed at the end)
#   --fake               no GPU needed: use the fake CUDA stack of
#                        examples/gpu/fake instead of CUDA (--vendor amd: the
#                        fake ROCm stack of examples/gpu/fake_rocm instead of
#                        ROCm); tests this script; the overhead table is
#                        printed but not judged
#   --compare EXPECT CSV [JSON]
#                        only compare a run's "expect" lines (EXPECT, the
#                        program's output) with a `popmon report --format
#                        csv` (CSV) and, for V9's values of the whole run, a
#                        `popmon report --format json` (JSON); used by tests
#   --ncu-expect CSV REPS
#                        only print the expect lines scenario C takes from
#                        Nsight Compute's CSV (ncu --csv --print-units base of
#                        the four region launches) for REPS launches per
#                        region; used by tests
# Environment: NVCC (default nvcc), NVCC_ARCH (default native), NVCC_FLAGS,
# CUDA_HOME (default /usr/local/cuda); ROCM_PATH (default /opt/rocm), HIPCC,
# HIP_ARCH (hipcc's --offload-arch, default native), HIPCC_FLAGS; CC
# (default cc), PYTHON, POPMON, MPICC, MPICXX, MPIRUN; ACC_CC, ACC_FLAGS,
# GPU_VALIDATE_CUDA_AWARE (above).
#
# Output: a line per expected value (scenario, metric, expected ± tolerance,
# measured, PASS or FAIL), the overhead table, and a summary. On a GPU the
# overhead is judged against issue 22's thresholds (and issue 24's: device
# counters add at most 2 % to the long-kernel loop): popmon --gpu on within
# 0.300 us per launch of the floor (sustained launches and the loop; NVIDIA
# only: AMD has no floor row), within 100 ns per trivial runtime call of the
# uninstrumented program, and 0 records lost. Exit status: 0 when every
# value passes, 1 when one fails or a run fails, 2 on a usage error, 3 when
# something needed is missing.
set -eu

usage() {
	sed -n '/^# Usage:/,/^# Environment:/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

die() {
	echo "gpu-validate: $*" >&2
	exit 3
}

# json_values JSON: the values of the whole run in a `popmon report --format
# json` (JSON), as "run,METRIC,VALUE" lines: gpu_records_lost (dropped +
# rejected records), gpu_devices (devices listed), and per kernel name
# kernels:NAME (executions) and kernel_s:NAME (device time, s) from the
# kernel table. Reads the report's layout: two spaces per level.
json_values() {
	awk '
		/^  "/ {
			top = $1
			gsub(/[":]/, "", top)
		}
		function num(s) {
			sub(/,$/, "", s)
			return s + 0
		}
		top == "gpu" && /^    "(dropped|rejected)_records": / { lost += num($2) }
		top == "gpu_devices" && /^      "index": / { ndev++ }
		top == "gpu_kernels" && /^      "name": "/ {
			name = substr($0, index($0, ": \"") + 3)
			sub(/",?$/, "", name)
			gsub(/,/, ";", name)
		}
		top == "gpu_kernels" && /^      "count": / { count[name] += num($2) }
		top == "gpu_kernels" && /^      "time_ns": / { time[name] += num($2) }
		END {
			printf "run,gpu_records_lost,%.0f\n", lost
			printf "run,gpu_devices,%d\n", ndev
			for (n in count)
				printf "run,kernels:%s,%.0f\nrun,kernel_s:%s,%.9f\n", n, count[n], n, time[n] / 1e9
		}
	' "$1"
}

# compare EXPECT CSV LABEL [JSON]: prints one line per "expect REGION METRIC
# VALUE TOL" line of EXPECT against the CSV report's value (region "run":
# the JSON report's values, json_values); returns 1 when one is absent or
# outside VALUE ± TOL. Derived: REGION/gpu_useful_s = gpu_parallel_efficiency
# × elapsed_s × devices (the region's device useful time when it used every
# device of the run), REGION/useful_ratio:NAME = that over
# run/kernel_s:NAME.
compare() {
	{
		cat "$2"
		if [ -n "${4:-}" ]; then
			json_values "$4"
		fi
	} | awk -v label="$3" '
		function fmt(x, tol) {
			if (x == int(x) && (x >= 1000 || x <= -1000 || tol == 0))
				return sprintf("%.0f", x)
			return sprintf(tol > 0 && tol < 0.001 ? "%.6f" : "%.3f", x)
		}
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
			name = $2 == "work" || $2 == "run" ? $3 : k
			total++
			if (!(k in v) && ($3 == "gpu_useful_s" || $3 ~ /^useful_ratio:/) &&
			    ($2 "/gpu_parallel_efficiency") in v && ($2 "/elapsed_s") in v && v["run/gpu_devices"] > 0) {
				useful = v[$2 "/gpu_parallel_efficiency"] * v[$2 "/elapsed_s"] * v["run/gpu_devices"]
				if ($3 == "gpu_useful_s")
					v[k] = useful
				else {
					ks = "run/kernel_s:" substr($3, length("useful_ratio:") + 1)
					if ((ks in v) && v[ks] > 0)
						v[k] = useful / v[ks]
				}
			}
			if (!(k in v)) {
				printf "%-12s %-30s %8s ± %-6.3g %9s  FAIL\n", label, name, fmt($4, $5), $5, "absent"
				bad++
				next
			}
			d = v[k] - $4
			if (d < 0)
				d = -d
			ok = d <= $5 + 1e-9
			if (!ok)
				bad++
			printf "%-12s %-30s %8s ± %-6.3g %9s  %s\n", label, name, fmt($4, $5), $5, fmt(v[k], $5), ok ? "PASS" : "FAIL"
		}
		END {
			if (total == 0) {
				printf "%-12s no expected values\n", label
				exit 1
			}
			exit bad > 0
		}
	' - "$1"
}

# ncu_expect CSV REPS: the expect lines of Nsight Compute's values (its CSV
# of the four region launches of `gpu_counters --reps 1`, in region order,
# base units) for a run of REPS launches per region: instructions and DRAM
# bytes within 2 %, achieved occupancy within 0.05.
ncu_expect() {
	awk -v reps="$2" '
		function unq(s) { gsub(/^"|"$/, "", s); return s }
		{
			n = split($0, f, /","/)
			for (i = 1; i <= n; i++)
				f[i] = unq(f[i])
		}
		!hdr && f[1] == "ID" {
			for (i = 1; i <= n; i++)
				col[f[i]] = i
			hdr = 1
			next
		}
		hdr && col["Metric Name"] {
			id = f[col["ID"]] + 0
			v = f[col["Metric Value"]]
			gsub(/,/, "", v)
			val[id, f[col["Metric Name"]]] = v + 0
			if (id + 1 > ids)
				ids = id + 1
		}
		END {
			split("instr dram occ_full occ_quarter", region, " ")
			for (id = 0; id < ids && id < 4; id++) {
				r = region[id + 1]
				i = val[id, "sm__inst_executed.sum"] * reps
				printf "expect %s gpu_instructions %.0f %.0f\n", r, i, 0.02 * i
				if (r == "dram") {
					b = (val[id, "dram__bytes_read.sum"] + val[id, "dram__bytes_write.sum"]) * reps
					printf "expect %s gpu_dram_bytes %.0f %.0f\n", r, b, 0.02 * b
				}
				if (r ~ /^occ_/)
					printf "expect %s gpu_achieved_occupancy %.4f 0.05\n", r,
						val[id, "sm__warps_active.avg.pct_of_peak_sustained_active"] / 100
			}
		}' "$1"
}

reps=3 unit=100 only="V1,V2,V3,V4,V5,V6,V7,V8,V9,V10,V11,V12,V13,C,ACC" launches=1000000 overhead_n=100000 rounds=3 out="" fake=0 mpi="" vendor=nvidia
while [ $# -gt 0 ]; do
	case "$1" in
	--vendor | --mpi | --reps | --unit | --only | --launches | --overhead | --rounds | --out)
		[ $# -ge 2 ] || usage
		case "$1" in
		--vendor) vendor=$2 ;;
		--mpi) mpi=$2 ;;
		--reps) reps=$2 ;;
		--unit) unit=$2 ;;
		--only) only=$2 ;;
		--launches) launches=$2 ;;
		--overhead) overhead_n=$2 ;;
		--rounds) rounds=$2 ;;
		--out) out=$2 ;;
		esac
		shift 2
		;;
	--fake)
		fake=1
		shift
		;;
	--ncu-expect)
		[ $# -eq 3 ] && [ -r "$2" ] || usage
		ncu_expect "$2" "$3"
		exit $?
		;;
	--compare)
		[ $# -eq 3 ] || [ $# -eq 4 ] || usage
		[ -r "$2" ] && [ -r "$3" ] && { [ $# -eq 3 ] || [ -r "$4" ]; } || die "cannot read $2, $3 or ${4:-}"
		compare "$2" "$3" "-" "${4:-}"
		exit $?
		;;
	-h | --help) usage ;;
	*)
		echo "gpu-validate: unknown argument '$1'" >&2
		usage
		;;
	esac
done

case "$vendor" in nvidia | amd) ;; *) echo "gpu-validate: --vendor nvidia or amd" >&2 && usage ;; esac
case "$reps" in '' | *[!0-9]* | 0) echo "gpu-validate: --reps wants a positive integer" >&2 && usage ;; esac
case "$unit" in '' | *[!0-9]* | 0) echo "gpu-validate: --unit wants a positive integer (ms)" >&2 && usage ;; esac
case "$launches" in '' | *[!0-9]* | 0) echo "gpu-validate: --launches wants a positive integer" >&2 && usage ;; esac
case "$overhead_n" in '' | *[!0-9]*) echo "gpu-validate: --overhead wants an integer" >&2 && usage ;; esac
case "$rounds" in '' | *[!0-9]* | 0) echo "gpu-validate: --rounds wants a positive integer" >&2 && usage ;; esac
modes=$(echo "$only" | tr ',' ' ')
for m in $modes; do
	case "$m" in V[1-9] | V1[0-3] | C | ACC) ;; *) echo "gpu-validate: unknown scenario '$m' (V1 ... V13, C, ACC)" >&2 && usage ;; esac
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
	# Open MPI binds a rank to one core by default (2 ranks or fewer):
	# V9's and V10's host threads would share it, and their launches wait
	# for a time slice (V10 on an H200: 9 ms per repetition, device
	# efficiency 0.60 against 0.624 unbound).
	mpirun_flags="--oversubscribe --bind-to none"
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

for tool in "$MPICC" "$MPIRUN" "${CC:-cc}" awk; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found (see the needs at the top of $0)"
done

# The vendor's names: the fake stack's device count, the variable that
# hides devices from the runtime, the trivial runtime call of the overhead
# mode.
if [ "$vendor" = amd ]; then
	devices_var=FAKEHIP_DEVICES visible_var=HIP_VISIBLE_DEVICES getter=hipGetDevice
else
	devices_var=FAKECUDA_DEVICES visible_var=CUDA_VISIBLE_DEVICES getter=cudaGetDevice
fi

# ---- the machine --------------------------------------------------------
if [ "$fake" = 1 ] && [ "$vendor" = amd ]; then
	echo "== fake ROCm stack (examples/gpu/fake_rocm): no GPU is used"
	fr=$dir/fake_rocm
	# With MPICC, build.sh also builds gpu_pop_hip: the scenarios on the fake
	# HIP runtime (../fake/fake_pop.c with FAKE_HIP).
	sh "$root/examples/gpu/fake_rocm/build.sh" "$fr" "$MPICC" >"$dir/build.log" 2>&1 ||
		die "building the fake ROCm stack failed: see $dir/build.log"
	prog=$fr/gpu_pop_hip
	[ -x "$prog" ] || die "the fake ROCm stack's build made no gpu_pop_hip: see $dir/build.log"
	LD_LIBRARY_PATH=$fr${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export LD_LIBRARY_PATH
	ngpu=1
elif [ "$fake" = 1 ]; then
	echo "== fake CUDA stack (examples/gpu/fake): no GPU is used"
	command -v "${CC:-cc}" >/dev/null 2>&1 || die "${CC:-cc} not found"
	sh "$root/examples/gpu/fake/build.sh" "$dir/fake" "$MPICC" >"$dir/build.log" 2>&1 ||
		die "building the fake stack failed: see $dir/build.log"
	prog=$dir/fake/gpu_pop
	cprog=$dir/fake/gpu_counters
	LD_LIBRARY_PATH=$dir/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	POPMON_CUPTI_LIBRARY=$dir/fake/libcupti.so
	export LD_LIBRARY_PATH POPMON_CUPTI_LIBRARY
	ngpu=1
elif [ "$vendor" = amd ]; then
	ROCM_PATH=${ROCM_PATH:-/opt/rocm}
	# rocm_tool NAME: NAME on the PATH, else under $ROCM_PATH/bin, else nothing.
	rocm_tool() {
		if command -v "$1" >/dev/null 2>&1; then
			command -v "$1"
		elif [ -x "$ROCM_PATH/bin/$1" ]; then
			echo "$ROCM_PATH/bin/$1"
		fi
	}
	HIPCC=${HIPCC:-$(rocm_tool hipcc)}
	[ -n "$HIPCC" ] || die "hipcc not found: install ROCm (6.2 or newer) with HIP, or set HIPCC or ROCM_PATH"
	rocminfo=$(rocm_tool rocminfo)
	[ -n "$rocminfo" ] || die "rocminfo not found: install ROCm or set ROCM_PATH"
	command -v "$MPICXX" >/dev/null 2>&1 || die "$MPICXX not found"
	echo "== machine"
	"$rocminfo" >"$dir/rocminfo.txt" 2>&1 || die "rocminfo failed (no AMD GPU driver, or no access to /dev/kfd):
$(tail -n 3 "$dir/rocminfo.txt")"
	# The GPU agents, one line each: "GPU 0: gfx90a, AMD Instinct MI210,
	# GPU-…" (rocminfo lists an agent's name, UUID and marketing name
	# before its device type).
	awk '
		/^Agent [0-9]+/ { name = ""; uuid = ""; market = "" }
		/^ *Name: / && name == "" { name = $2 }
		/^ *Uuid: / { uuid = $2 }
		/^ *Marketing Name: / { market = $0; sub(/^ *Marketing Name: */, "", market); sub(/ *$/, "", market) }
		/^ *Device Type: *GPU/ { printf "GPU %d: %s, %s, %s\n", n++, name, market, uuid }
	' "$dir/rocminfo.txt"
	ngpu=$(grep -c '^ *Device Type: *GPU' "$dir/rocminfo.txt" || true)
	[ "$ngpu" -ge 1 ] || die "no GPU agent found by rocminfo"
	smi=$(rocm_tool amd-smi)
	if [ -n "$smi" ]; then
		"$smi" list 2>&1 | grep -i 'gpu\|bdf\|uuid' || true
	else
		smi=$(rocm_tool rocm-smi)
		[ -z "$smi" ] || "$smi" --showproductname --showdriverversion --showuniqueid 2>&1 | grep -i 'gpu\[\|driver' || true
	fi
	echo "ROCm: $(cat "$ROCM_PATH/.info/version" 2>/dev/null || echo "version unknown") ($ROCM_PATH)"
	"$HIPCC" --version 2>&1 | grep -i 'hip version\|clang version' || true
	# rocprofiler-sdk, which popmon measures HIP programs through (ROCm 6.2+).
	sdk=$(ls "$ROCM_PATH"/lib/librocprofiler-sdk.so* "$ROCM_PATH"/lib64/librocprofiler-sdk.so* 2>/dev/null | head -n 1 || true)
	[ -n "$sdk" ] || sdk=$(ldconfig -p 2>/dev/null | awk '/librocprofiler-sdk\.so/ { print $NF; exit }')
	[ -n "$sdk" ] || die "rocprofiler-sdk not found (librocprofiler-sdk.so under $ROCM_PATH/lib or on the loader path): install ROCm 6.2 or newer with its rocprofiler-sdk package"
	echo "rocprofiler-sdk: $sdk"
	if [ -n "${ROCP_TOOL_LIBRARIES:-}" ]; then
		echo "ROCP_TOOL_LIBRARIES=$ROCP_TOOL_LIBRARIES: another rocprofiler-sdk tool; unset it" >&2
	fi
	echo "MPI: $("$MPIRUN" --version 2>&1 | head -n 1)"
	prog=$dir/gpu_pop_hip
	# mpicxx with hipcc as its compiler (Open MPI: OMPI_CXX; MPICH: MPICH_CXX).
	# shellcheck disable=SC2086 # HIPCC_FLAGS is a list of flags
	OMPI_CXX=$HIPCC MPICH_CXX=$HIPCC "$MPICXX" -O2 --offload-arch="${HIP_ARCH:-native}" ${HIPCC_FLAGS:-} \
		-I"$root/shim" -I"$root/examples/gpu" -o "$prog" "$root/examples/gpu/gpu_pop_hip.cpp" -lpthread \
		>"$dir/build.log" 2>&1 || {
		cat "$dir/build.log" >&2
		die "building gpu_pop_hip.cpp failed"
	}
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
		-I"$root/shim" -I"$root/examples/gpu" -o "$prog" "$root/examples/gpu/gpu_pop.cu" -lpthread \
		>"$dir/build.log" 2>&1 || {
		cat "$dir/build.log" >&2
		die "building gpu_pop.cu failed"
	}
	case ",$only," in
	*,C,*)
		cprog=$dir/gpu_counters
		# shellcheck disable=SC2086 # NVCC_FLAGS is a list of flags
		"$NVCC" -O2 -arch="${NVCC_ARCH:-native}" ${NVCC_FLAGS:-} -ccbin "$MPICXX" \
			-I"$root/shim" -I"$root/examples/gpu" -o "$cprog" "$root/examples/gpu/gpu_counters.cu" \
			>"$dir/build-counters.log" 2>&1 || {
			cat "$dir/build-counters.log" >&2
			die "building gpu_counters.cu failed"
		}
		NCU=${NCU:-$(command -v ncu || echo "$CUDA_HOME/bin/ncu")}
		[ -x "$NCU" ] || die "ncu (Nsight Compute) not found: needed by scenario C; set NCU or leave C out (--only)"
		;;
	esac
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
if [ "$vendor" = amd ]; then
	grep -i 'gpu\|rocm\|rocprofiler' "$dir/doctor.txt" || true
else
	grep -i 'gpu\|cuda\|cupti' "$dir/doctor.txt" || true
fi

# ---- the scenarios ------------------------------------------------------
runs=0 fails=0
# scenario LABEL NP ARGS [VAR=VALUE ...]: one measured run of the program
# with ARGS (words) and its comparison.
scenario() {
	label=$1 np=$2 args=$3
	shift 3
	f=$dir/$label
	runs=$((runs + 1))
	# shellcheck disable=SC2086 # mpirun_flags and args are lists of words
	if ! env "$@" "$popmon" run --gpu on --mpicc "$MPICC" --format none --force -o "$f.json" -- \
		"$MPIRUN" $mpirun_flags -np "$np" "$prog" $args >"$f.out" 2>"$f.err"; then
		printf "%-12s run failed  FAIL (%s)\n" "$label" "$f.err"
		sed 's/^/    /' "$f.err" | tail -n 5
		fails=$((fails + 1))
		return 0
	fi
	grep -v '^popmon: measurement written' "$f.err" | grep 'popmon: .*\(GPU\|CUDA\|CUPTI\|HIP\|ROCm\|rocprofiler\)' |
		sed "s/^/$label: /" || true
	grep '^expect ' "$f.out" >"$f.expect" || true
	"$popmon" report --format csv --region work "$f.json" >"$f.csv" 2>>"$f.err" || true
	"$popmon" report --format json "$f.json" >"$f.report.json" 2>>"$f.err" || true
	# The report's GPU: line (devices, CUPTI and driver versions or
	# rocprofiler-sdk and HIP versions, clock, dropped or rejected records),
	# whenever it differs from the last one.
	gpu_line=$("$popmon" report "$f.json" 2>/dev/null | grep '^GPU:' || true)
	if [ "$gpu_line" != "${last_gpu_line:-}" ]; then
		printf "%-12s %s\n" "$label" "$gpu_line"
		last_gpu_line=$gpu_line
	fi
	compare "$f.expect" "$f.csv" "$label" "$f.report.json" || fails=$((fails + 1))
	sed -n 's/^ok .*copy_ms=\([0-9.]*\).*/  (measured copy time c = \1 ms)/p' "$f.out"
}

# counters_run FILE MODE: gpu_counters under popmon --gpu on --gpu-counters
# MODE (period 100 µs) into FILE.json, its output in FILE.out; 1 on failure.
counters_run() {
	# shellcheck disable=SC2086 # mpirun_flags is a list of flags
	POPMON_GPU_COUNTERS_PERIOD_US=100 "$popmon" run --gpu on --gpu-counters "$2" --mpicc "$MPICC" --format none \
		--force -o "$1.json" -- "$MPIRUN" $mpirun_flags -np 1 "$cprog" --reps "$creps" >"$1.out" 2>"$1.err"
}

# counters_scenario: scenario C (examples/gpu/devcounters.h): popmon's
# device counters per region against the designed values, and on a GPU
# against Nsight Compute's per kernel and the SM clock nvidia-smi saw.
counters_scenario() {
	label=C f=$dir/counters
	runs=$((runs + 1))
	creps=$((reps * 4))
	smi_pid=""
	if [ "$fake" = 0 ]; then
		nvidia-smi --query-gpu=clocks.sm,utilization.gpu --format=csv,noheader,nounits -lms 50 \
			>"$f.smi" 2>/dev/null &
		smi_pid=$!
	fi
	if ! counters_run "$f" on; then
		[ -z "$smi_pid" ] || kill "$smi_pid" 2>/dev/null || true
		printf "%-12s run failed  FAIL (%s)\n" "$label" "$f.err"
		sed 's/^/    /' "$f.err" | tail -n 5
		fails=$((fails + 1))
		return 0
	fi
	[ -z "$smi_pid" ] || kill "$smi_pid" 2>/dev/null || true
	grep '^expect ' "$f.out" >"$f.expect" || true
	"$popmon" report --format csv "$f.json" >"$f.csv" 2>>"$f.err" || true
	gpu_line=$("$popmon" report "$f.json" 2>/dev/null | grep '^GPU:' || true)
	printf "%-12s %s\n" "$label" "$gpu_line"
	if [ "$fake" = 0 ]; then
		# Nsight Compute on the same kernels: the four region launches.
		"$NCU" --csv --print-units base --clock-control none --launch-skip 4 --launch-count 4 \
			--metrics sm__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
			"$cprog" --reps 1 >"$f.ncu.csv" 2>"$f.ncu.err" || echo "C            ncu failed (see $f.ncu.err)"
		ncu_expect "$f.ncu.csv" "$creps" >>"$f.expect"
		# The SM clock while the GPU was busy (nvidia-smi, MHz), within 5 %.
		awk -F', *' '$2 + 0 >= 50 { s += $1; n++ } END { if (n) printf "expect instr gpu_sm_frequency_ghz %.4f %.4f\n", s / n / 1000, 0.05 * s / n / 1000 }' \
			"$f.smi" >>"$f.expect"
	fi
	compare "$f.expect" "$f.csv" "$label" || fails=$((fails + 1))
	# The cost: the long-kernel loop (region instr's wall time) with device
	# counters off and on, best of 3 each.
	best() {
		b=""
		for i in 1 2 3; do
			counters_run "$f-$1-$i" "$1" || continue
			t=$(awk '$1 == "time" && $2 == "instr" { print $3 }' "$f-$1-$i.out")
			[ -n "$t" ] || continue
			b=$(echo "$b $t" | awk '{ m = $NF; for (i = 1; i < NF; i++) if ($i < m) m = $i; print m }')
		done
		echo "$b"
	}
	toff=$(best off)
	ton=$(best on)
	if [ -z "$toff" ] || [ -z "$ton" ]; then
		echo "C            counter cost: a run failed (see $f-off-*.err, $f-on-*.err)"
		fails=$((fails + 1))
		return 0
	fi
	echo "$toff $ton" | awk -v fake="$fake" '{
		d = ($2 - $1) / $1
		printf "C            long-kernel loop: %.3f ms with device counters off, %.3f ms on (%+.2f %%)", $1, $2, 100 * d
		if (fake == 1) {
			print "  (not judged on the fake stack)"
			exit 0
		}
		printf "  %s\n", d <= 0.02 ? "PASS (≤ 2 %)" : "FAIL (> 2 %)"
		exit d > 0.02
	}' || fails=$((fails + 1))
}

echo
# cuda_aware: whether the MPI takes device pointers (GPU_VALIDATE_CUDA_AWARE
# 1 or 0, else Open MPI's ompi_info).
cuda_aware() {
	case "${GPU_VALIDATE_CUDA_AWARE:-}" in
	1) return 0 ;;
	0) return 1 ;;
	esac
	command -v ompi_info >/dev/null 2>&1 &&
		ompi_info --parsable --all 2>/dev/null | grep -q 'mpi_built_with_cuda_support:value:true'
}

# acc_scenario: examples/openacc/acc_pop.c built with an OpenACC compiler
# (the fake stack: GCC's host fallback, -fopenacc; a GPU: ACC_CC, default
# nvc, with ACC_FLAGS, default -acc=gpu) and measured on 2 ranks; it prints
# its own expected device offload efficiency (from its own clocks).
acc_scenario() {
	acc=$dir/acc_pop
	if [ "$fake" = 1 ]; then
		acc_build="$MPICC -fopenacc -DACC_POP_SLEEP"
	else
		acc_cc=${ACC_CC:-nvc}
		if ! command -v "$acc_cc" >/dev/null 2>&1; then
			echo "ACC          skipped: no OpenACC compiler for the GPU ($acc_cc; set ACC_CC and ACC_FLAGS)"
			return 0
		fi
		acc_build="env OMPI_CC=$acc_cc MPICH_CC=$acc_cc $MPICC ${ACC_FLAGS:--acc=gpu}"
	fi
	# shellcheck disable=SC2086 # acc_build is a command line
	if ! $acc_build -O1 -I"$root/shim" -I"$root/examples" -o "$acc" "$root/examples/openacc/acc_pop.c" \
		>"$dir/build-acc.log" 2>&1; then
		if [ "$fake" = 1 ]; then
			echo "ACC          skipped: $MPICC has no OpenACC (-fopenacc): see $dir/build-acc.log"
		else
			printf "%-12s build failed  FAIL (%s)\n" ACC "$dir/build-acc.log"
			runs=$((runs + 1)) fails=$((fails + 1))
		fi
		return 0
	fi
	saved_prog=$prog
	prog=$acc
	# One OpenMP thread per rank, as designed: GCC's OpenACC runtime is
	# libgomp, which popmon measures as an OpenMP runtime (a rank holds its
	# team size's CPUs, both cores under an MPI that does not bind).
	scenario ACC 2 "$reps $unit" OMP_NUM_THREADS=1
	prog=$saved_prog
}

printf "%-12s %-30s %-17s %9s  %s\n" scenario metric "expected ± tol" measured result
for m in $modes; do
	std="$m $reps $unit"
	case $m in
	V6 | V7)
		if [ "$fake" = 1 ]; then
			scenario "$m-2gpus" 2 "$std" "$devices_var=2"
			scenario "$m-shared" 2 "$std" "$devices_var=1"
			scenario "$m-distinct" 2 "$std" "$devices_var=1" POPMON_GPU_TEST_DISTINCT_DEVICE_PER_RANK=1
		elif [ "$ngpu" -ge 2 ]; then
			scenario "$m-2gpus" 2 "$std"
			scenario "$m-shared" 2 "$std" "$visible_var=0"
		else
			scenario "$m-shared" 2 "$std"
			scenario "$m-distinct" 2 "$std" POPMON_GPU_TEST_DISTINCT_DEVICE_PER_RANK=1
		fi
		;;
	V8)
		if [ "$fake" = 1 ]; then
			scenario "$m" 1 "$std" "$devices_var=2"
		elif [ "$ngpu" -ge 2 ]; then
			scenario "$m" 1 "$std"
		else
			echo "V8           skipped: needs 2 GPUs"
		fi
		;;
	V9)
		# The launch storm, once (not --reps times), from 1 and 4 threads.
		for t in 1 4; do
			label=$m-${t}thread
			[ "$t" = 1 ] || label=${label}s
			scenario "$label" 1 "V9 --launches $launches --threads $t"
		done
		;;
	C)
		if [ "$vendor" = amd ]; then
			echo "C            skipped: device counters are read on NVIDIA GPUs only"
		else
			counters_scenario
		fi
		;;
	V11 | V12 | V13 | ACC)
		if [ "$vendor" = amd ]; then
			printf "%-12s skipped: NVIDIA only for now\n" "$m"
		elif [ "$m" = V12 ] && [ "$fake" = 1 ]; then
			scenario "$m-peer" 1 "$std" "$devices_var=2"
			scenario "$m-dtod" 1 "$std" "$devices_var=1"
		elif [ "$m" = V13 ]; then
			if [ "$fake" = 1 ]; then
				scenario "$m" 2 "$std" "$devices_var=2"
			elif cuda_aware; then
				scenario "$m" 2 "$std"
			else
				echo "V13          skipped: needs a CUDA-aware MPI (GPU_VALIDATE_CUDA_AWARE=1 says it is one)"
			fi
		elif [ "$m" = ACC ]; then
			acc_scenario
		else
			scenario "$m" 1 "$std"
		fi
		;;
	*) scenario "$m" 1 "$std" ;;
	esac
done

# ---- overhead -----------------------------------------------------------
# The floor: CUPTI's kernel records alone (examples/gpu/floor/cupti_floor.c).
floor=$dir/cupti_floor.so
# overhead WHAT: one run of `gpu_pop overhead N`, uninstrumented (plain),
# under popmon (off, on) or with the floor tool (floor, NVIDIA); prints "CALL_NS
# LAUNCH_NS LOOP_NS LOST" (LOST "-" when nothing records kernels; else the
# records the tool says it dropped or rejected, or, if more, the kernels the
# program launched that it did not record), nothing when the run failed.
overhead() {
	what=$1
	o=$dir/overhead-$what
	# shellcheck disable=SC2086 # mpirun_flags is a list of flags
	case $what in
	plain)
		"$MPIRUN" $mpirun_flags -np 1 "$prog" overhead "$overhead_n" >"$o.out" 2>&1 || true
		;;
	floor)
		CUDA_INJECTION64_PATH=$floor "$MPIRUN" $mpirun_flags -np 1 "$prog" overhead "$overhead_n" \
			>"$o.out" 2>&1 || true
		;;
	*)
		rm -f "$o.json"
		gc=auto
		[ "$what" != on-nocounters ] || what=on gc=off
		"$popmon" run --gpu "$what" --gpu-counters "$gc" --mpicc "$MPICC" --format none --force -o "$o.json" -- \
			"$MPIRUN" $mpirun_flags -np 1 "$prog" overhead "$overhead_n" >"$o.out" 2>&1 || true
		if [ "$what" = on ] && [ -s "$o.json" ]; then
			"$popmon" report --format json "$o.json" 2>/dev/null >"$o.report.json" || true
			json_values "$o.report.json" >"$o.values"
		fi
		;;
	esac
	{
		cat "$o.values" 2>/dev/null || true
		cat "$o.out"
	} | awk -v what="$what" '
		/^run,gpu_records_lost,/ { split($0, f, ","); lost = f[3]; tool = 1 }
		# not counted: the blit and fill kernels of the HIP runtime itself
		# (hipMemset, copies done by kernels), which the program did not launch
		/^run,kernels:/ && !/^run,kernels:__amd_rocclr_/ { n = split($0, f, ","); recorded += f[n] }
		/^cupti-floor: records=/ {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				# one line per process that loaded CUDA (mpirun
				# itself may: records=0): their sums
				if (kv[1] == "records")
					recorded += kv[2]
				else if (kv[1] == "dropped")
					lost += kv[2]
			}
			tool = 1
		}
		/^overhead call_ns=/ {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				x[kv[1]] = kv[2]
			}
		}
		END {
			if (!("loop_ns" in x) || (what != "plain" && what != "off" && !tool))
				exit
			if (tool && x["kernels"] - recorded > lost)
				lost = x["kernels"] - recorded
			printf "%s %s %s %s\n", x["call_ns"], x["launch_ns"], x["loop_ns"], tool ? lost + 0 : "-"
		}'
}

# torch_python: a Python with PyTorch and a CUDA device ($PYTHON alone when
# set), or nothing; --vendor amd: PyTorch for ROCm (torch.version.hip) and
# an AMD device (which PyTorch calls "cuda" too).
torch_python() {
	probe='import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'
	[ "$vendor" = nvidia ] ||
		probe='import sys, torch; sys.exit(0 if torch.version.hip and torch.cuda.is_available() else 1)'
	for py in ${PYTHON:-python3 /opt/torch/.venv/bin/python3}; do
		if "$py" -c "$probe" >/dev/null 2>&1; then
			echo "$py"
			return 0
		fi
	done
}

# torch_loop WHAT PYTHON: examples/gpu/torch_overhead.py plain, under popmon
# (popmon) or torch.profiler (profiler); prints "LOOP_NS LOST" as above.
torch_loop() {
	what=$1 py=$2
	o=$dir/overhead-torch-$what
	t=$root/examples/gpu/torch_overhead.py
	case $what in
	plain) "$py" "$t" --ops "$overhead_n" >"$o.out" 2>&1 || true ;;
	profiler) "$py" "$t" --ops "$overhead_n" --profile >"$o.out" 2>&1 || true ;;
	popmon)
		rm -f "$o.json"
		"$popmon" run --no-mpi --gpu on --format none --force -o "$o.json" -- \
			"$py" "$t" --ops "$overhead_n" >"$o.out" 2>&1 || true
		if [ -s "$o.json" ]; then
			"$popmon" report --format json "$o.json" 2>/dev/null >"$o.report.json" || true
			json_values "$o.report.json" >"$o.values"
		fi
		;;
	esac
	{
		cat "$o.values" 2>/dev/null || true
		cat "$o.out"
	} | awk -v what="$what" '
		/^run,gpu_records_lost,/ { split($0, f, ","); lost = f[3]; tool = 1 }
		/^torch loop_ns=/ {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				x[kv[1]] = kv[2]
			}
		}
		END {
			if (!("loop_ns" in x) || (what == "popmon" && !tool))
				exit
			# torch.profiler: the kernels it saw against the ops it ran
			if (what == "profiler" && ("kernels" in x)) {
				tool = 1
				lost = x["ops"] - x["kernels"]
				if (lost < 0)
					lost = 0
			}
			printf "%s %s\n", x["loop_ns"], tool ? lost + 0 : "-"
		}'
}

if [ "$overhead_n" -gt 0 ]; then
	runs=$((runs + 1))
	bad=0
	if [ "$vendor" = nvidia ]; then
		"${CC:-cc}" -O2 -std=c11 -Wall -Wextra -Werror -fPIC -shared -o "$floor" \
			"$root/examples/gpu/floor/cupti_floor.c" -ldl >"$dir/floor-build.log" 2>&1 || {
			cat "$dir/floor-build.log" >&2
			echo "  building the floor tool failed"
			bad=1
		}
	fi
	# Every row $rounds times, interleaved (a drift of the machine touches
	# every row alike); each column's median, the most records lost.
	whats="plain off on"
	[ "$vendor" = amd ] || whats="$whats on-nocounters floor"
	: >"$dir/overhead-rounds.txt"
	r=0
	while [ "$r" -lt "$rounds" ]; do
		for w in $whats; do
			res=$(overhead "$w")
			[ -z "$res" ] || echo "$w $res" >>"$dir/overhead-rounds.txt"
		done
		r=$((r + 1))
	done
	# median_of WHAT: "CALL_NS LAUNCH_NS LOOP_NS LOST" of WHAT's rounds.
	median_of() {
		awk -v w="$1" '
			function med(a, n,    i, j, t) {
				for (i = 2; i <= n; i++)
					for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
						t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
					}
				return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			}
			$1 == w {
				n++
				c[n] = $2; l[n] = $3; p[n] = $4
				if ($5 == "-")
					lost = "-"
				else if (lost == "" || $5 + 0 > lost + 0)
					lost = $5
			}
			END {
				if (n)
					printf "%.3f %.3f %.3f %s\n", med(c, n), med(l, n), med(p, n), lost
			}' "$dir/overhead-rounds.txt"
	}
	plain=$(median_of plain)
	off=$(median_of off)
	on=$(median_of on)
	onnc=$(median_of on-nocounters)
	fl=$(median_of floor)
	echo
	echo "overhead: $overhead_n trivial runtime calls ($getter), $overhead_n empty <<<1,1>>> launches (sustained:"
	echo "  more than the launch queue holds), $overhead_n launches of a launch-bound loop (a tiny elementwise kernel,"
	echo "  a stream synchronisation every 100); mean per call or launch, the median of $rounds interleaved rounds;"
	echo "  records lost: dropped, rejected or not recorded (the most of a round)"
	printf "  %-34s %9s %11s %11s %13s\n" "" "call ns" "launch µs" "loop µs" "records lost" # µ: 2 bytes
	row() {
		if [ -z "$2" ]; then
			printf "  %-34s run failed (see %s)\n" "$1" "$dir/overhead-$3.out"
			bad=1
			return 0
		fi
		echo "$2" | awk -v name="$1" '{
			printf "  %-34s %9.1f %10.3f %10.3f %13s\n", name, $1, $2 / 1000, $3 / 1000, $4
		}'
	}
	row "uninstrumented" "$plain" plain
	row "popmon --gpu off" "$off" off
	row "popmon --gpu on" "$on" on
	[ "$vendor" = amd ] || row "popmon --gpu on --gpu-counters off" "$onnc" on-nocounters
	if [ "$vendor" = amd ]; then
		echo "  (no floor row for AMD: no rocprofiler-sdk tool keeping kernel records alone is built)"
	else
		row "CUPTI records only (floor)" "$fl" floor
	fi
	py=""
	if [ "$fake" = 1 ]; then
		echo "  (PyTorch rows: not on the fake stack)"
	else
		py=$(torch_python)
		if [ -z "$py" ] && [ "$vendor" = amd ]; then
			echo "  (PyTorch rows: no Python with PyTorch for ROCm and an AMD GPU found: set PYTHON)"
		elif [ -z "$py" ]; then
			echo "  (PyTorch rows: no Python with PyTorch and CUDA found: set PYTHON)"
		fi
	fi
	if [ -n "$py" ]; then
		for w in plain popmon profiler; do
			r=$(torch_loop "$w" "$py")
			name=$(echo "$w" | sed 's/^plain$/uninstrumented/; s/^popmon$/popmon --gpu on/; s/^profiler$/torch.profiler/')
			if [ -z "$r" ]; then
				printf "  %-34s run failed (see %s)\n" "PyTorch loop, $name" "$dir/overhead-torch-$w.out"
				bad=1
			else
				echo "$r" | awk -v name="PyTorch loop, $name" '{
					printf "  %-34s %9s %10s %10.3f %13s\n", name, "-", "-", $1 / 1000, $2
				}'
			fi
		done
		echo "  (PyTorch: $py; one x.add_(1) on 1024 floats per launch, the same loop)"
	fi
	if [ "$vendor" = amd ] && [ -n "$plain" ] && [ -n "$on" ]; then
		# No floor: launches against the uninstrumented program, not judged.
		echo "$plain $on" | awk -v fake="$fake" '{
			dcall = $5 - $1
			dlaunch = $6 - $2
			dloop = $7 - $3
			printf "  popmon --gpu on: %+.1f ns per call, %+.3f µs per launch and %+.3f µs per loop launch over uninstrumented\n",
				dcall, dlaunch / 1000, dloop / 1000
			if (fake == 1) {
				print "  thresholds not judged on the fake stack (its costs are not real)"
				exit 0
			}
			printf "  per trivial call ≤ uninstrumented + 100 ns:     %+8.1f ns  %s\n", dcall, dcall <= 100 ? "PASS" : "FAIL"
			print "  per launch and per loop launch: not judged (no floor for AMD)"
			printf "  records lost by popmon --gpu on = 0:            %8s     %s\n", $8, $8 == "0" ? "PASS" : "FAIL"
			exit dcall > 100 || $8 != "0"
		}' || bad=1
	elif [ -n "$plain" ] && [ -n "$on" ] && [ -n "$fl" ]; then
		echo "$plain $on $fl" | awk -v fake="$fake" '{
			dcall = $5 - $1
			dlaunch = $6 - $10
			dloop = $7 - $11
			printf "  popmon --gpu on: %+.1f ns per call over uninstrumented; %+.3f µs per launch and %+.3f µs per loop launch over the floor\n",
				dcall, dlaunch / 1000, dloop / 1000
			if (fake == 1) {
				print "  thresholds not judged on the fake stack (its costs are not real)"
				exit 0
			}
			bad = 0
			printf "  per trivial call ≤ uninstrumented + 100 ns:     %+8.1f ns  %s\n", dcall, dcall <= 100 ? "PASS" : "FAIL"
			printf "  per launch ≤ floor + 0.300 µs:                  %+8.3f µs  %s\n", dlaunch / 1000, dlaunch <= 300 ? "PASS" : "FAIL"
			printf "  per loop launch ≤ floor + 0.300 µs:             %+8.3f µs  %s\n", dloop / 1000, dloop <= 300 ? "PASS" : "FAIL"
			printf "  records lost by popmon --gpu on = 0:            %8s     %s\n", $8, $8 == "0" ? "PASS" : "FAIL"
			bad = dcall > 100 || dlaunch > 300 || dloop > 300 || $8 != "0"
			exit bad
		}' || bad=1
	fi
	[ "$bad" = 0 ] || fails=$((fails + 1))
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
