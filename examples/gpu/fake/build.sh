#!/bin/sh
# build.sh: builds the fake CUDA stack (README.md in this folder).
#
#   examples/gpu/fake/build.sh OUTDIR [MPICC]
#
# Produces in OUTDIR, with $CC (default cc):
#   libcuda.so.1 (and libcuda.so)  the fake driver and runtime (fakecuda.c)
#   libcupti.so                    the fake CUPTI (fakecupti.c)
#   libsmoke.so, smoke             the standalone smoke test (smoke.c)
# and, when MPICC is given, the fake-CUDA MPI validation program
#   gpu_pop                        (fake_pop.c: the scenarios of ../scenarios.h)
#   gpu_calls                      (calls.c: which CUDA calls libpopmon times)
#   gpu_counters                   (fake_counters.c: ../devcounters.h, device counters)
# Everything finds libcuda.so.1 through an rpath to OUTDIR.
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

run "$CC" $CFLAGS -fPIC -shared -Wl,-soname,libcuda.so.1 -o "$out/libcuda.so.1" \
	"$here/fakecuda.c" -ldl -lpthread
ln -sf libcuda.so.1 "$out/libcuda.so"
run "$CC" $CFLAGS -fPIC -shared -Wl,-soname,libcupti.so -o "$out/libcupti.so" \
	"$here/fakecupti.c" -L"$out" -Wl,-rpath,"$out" -lcuda -lpthread
run "$CC" $CFLAGS -fPIC -shared -o "$out/libsmoke.so" "$here/smoke.c" -ldl
run "$CC" $CFLAGS -DSMOKE_MAIN -o "$out/smoke" "$here/smoke.c" \
	-L"$out" -Wl,-rpath,"$out" -lsmoke -lcuda
if [ $# -eq 2 ]; then
	run "$2" $CFLAGS -I"$shim" -I"$here" -I"$here/.." -I"$here/../.." -o "$out/gpu_pop" "$here/fake_pop.c" \
		-L"$out" -Wl,-rpath,"$out" -lcuda -lm
	run "$2" $CFLAGS -I"$shim" -I"$here" -I"$here/.." -o "$out/gpu_counters" "$here/fake_counters.c" \
		-L"$out" -Wl,-rpath,"$out" -lcuda
	run "$2" $CFLAGS -I"$shim" -I"$here" -o "$out/gpu_calls" "$here/calls.c" \
		-L"$out" -Wl,-rpath,"$out" -lcuda -lpthread
fi
