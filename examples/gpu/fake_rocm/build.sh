#!/bin/sh
# build.sh: builds the fake HIP stack (README.md in this folder).
#
#   examples/gpu/fake_rocm/build.sh OUTDIR [MPICC]
#
# Produces in OUTDIR, with $CC (default cc):
#   libamdhip64.so          the fake HIP runtime (fakehip.c)
#   librocprofiler-sdk.so   the fake rocprofiler-sdk (fakesdk.c)
#   libsmoke_rocm.so        the standalone smoke test's tool (smoke.c)
#   smoke_rocm              the smoke test's program (smoke.c -DSMOKE_MAIN)
#   abi_check               libpopmon's ABI declarations against the fake's
# and, when MPICC is given and ../fake/fake_pop.c has its FAKE_HIP form,
#   gpu_pop_hip             the validation scenarios on this stack
# Programs find libamdhip64.so through an rpath to OUTDIR; the runtime finds
# librocprofiler-sdk.so beside itself, as rocprofiler-register does.
set -eu

[ $# -ge 1 ] && [ $# -le 2 ] || {
	echo "usage: $0 OUTDIR [MPICC]" >&2
	exit 2
}
here=$(cd "$(dirname "$0")" && pwd)
shim=$(cd "$here/../../../shim" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
CC=${CC:-cc}
CFLAGS="-O2 -g -std=c11 -Wall -Wextra -Werror"

run() {
	echo "$*"
	"$@"
}

run "$CC" $CFLAGS -fPIC -shared -Wl,-soname,libamdhip64.so -o "$out/libamdhip64.so" \
	"$here/fakehip.c" -ldl -lpthread
run "$CC" $CFLAGS -fPIC -shared -Wl,-soname,librocprofiler-sdk.so -o "$out/librocprofiler-sdk.so" \
	"$here/fakesdk.c" -ldl -lpthread
run "$CC" $CFLAGS -fPIC -shared -o "$out/libsmoke_rocm.so" "$here/smoke.c" -ldl
run "$CC" $CFLAGS -DSMOKE_MAIN -o "$out/smoke_rocm" "$here/smoke.c" \
	-L"$out" -Wl,-rpath,"$out" -lamdhip64
run "$CC" $CFLAGS -I"$shim" -o "$out/abi_check" "$here/abi_check.c"
if [ $# -eq 2 ] && grep -q FAKE_HIP "$here/../fake/fake_pop.c" 2>/dev/null; then
	run "$2" $CFLAGS -DFAKE_HIP -I"$shim" -I"$here/../fake" -I"$here" -I"$here/.." -I"$here/../.." \
		-o "$out/gpu_pop_hip" "$here/../fake/fake_pop.c" -L"$out" -Wl,-rpath,"$out" -lamdhip64 -lm
fi
