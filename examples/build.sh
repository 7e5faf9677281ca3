#!/bin/sh
# build.sh: builds the popmon validation programs.
#
#   examples/build.sh OUTDIR [openmpi|mpich]
#
# openmpi uses mpicc.openmpi/mpif90.openmpi, mpich uses mpicc.mpich/mpif90.mpich;
# without the second argument: $MPICC/$MPIFC if set, else mpicc/mpif90.
# Produces in OUTDIR: balanced imbalance ending two_phase pipeline regions misuse serial bytes rooted wildcard comms talp_regions
# late_sender wait_barrier late_bcast early_reduce wrong_order critical_path (wait-state designs)
# talp_api talp_monitor, imbalance_f regions_f talp_api_f (skipped with a warning when no Fortran
# compiler wrapper exists) and libdlb.so (the DLB stand-in the talp_* programs link against, found
# through an rpath to OUTDIR, so nothing needs LD_LIBRARY_PATH).
# Also amdahl (strong scaling with a designed serial fraction, for popmon model), init_sleep
# (only a sleep between MPI_Init and MPI_Finalize) and imbalance_cxx (the demo in C++, built with
# the MPI C++ wrapper $MPICXX / mpicxx.openmpi / mpicxx.mpich).
# The OpenMP programs omp_serial omp_imbalance omp_nested (no MPI) and hybrid_phases
# hybrid_mpi_idle team_override malleable (MPI+OpenMP, with the MPI wrapper above) are built twice:
# NAME.gcc (gcc -fopenmp: GNU libgomp) and NAME.clang (clang -fopenmp: LLVM
# libomp, the runtime with OMPT; the MPI ones through the wrapper with
# OMPI_CC=clang MPICH_CC=clang). $GCC and $CLANG name the compilers (default
# gcc, clang); a build whose compiler or OpenMP runtime is missing is skipped
# with a warning.
set -eu

usage() {
	echo "usage: $0 OUTDIR [openmpi|mpich]" >&2
	exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage

case "${2:-}" in
openmpi) CC=mpicc.openmpi CXX=mpicxx.openmpi FC=mpif90.openmpi ;;
mpich) CC=mpicc.mpich CXX=mpicxx.mpich FC=mpif90.mpich ;;
"") CC=${MPICC:-mpicc} CXX=${MPICXX:-mpicxx} FC=${MPIFC:-mpif90} ;;
*) usage ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
shim=$(cd "$here/../shim" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)

command -v "$CC" >/dev/null 2>&1 || {
	echo "$0: MPI C compiler wrapper '$CC' not found" >&2
	exit 1
}

CFLAGS="-O2 -g -std=c11 -Wall -Wextra -Werror"
FFLAGS="-O2 -std=f2008 -Wall -Wextra -Werror"

run() {
	echo "$*"
	"$@"
}

# The DLB stand-in, and the TALP-instrumented program linked against it.
dlbinc=$here/../internal/dlbhome/files/include # DLB's headers as `popmon dlb-home` installs them
run "$CC" $CFLAGS -I"$dlbinc" -fPIC -shared -Wl,-soname,libdlb.so -o "$out/libdlb.so" "$here/dlbstub/dlb_stub.c"
for p in talp_regions talp_api talp_monitor; do
	run "$CC" $CFLAGS -I"$dlbinc" -I"$shim" -o "$out/$p" "$here/$p.c" \
		-L"$out" -Wl,-rpath,"$out" -ldlb
done

for p in balanced imbalance ending two_phase pipeline regions misuse serial finalize_skew region_names weighted bytes rooted wildcard comms \
	late_sender wait_barrier late_bcast early_reduce wrong_order critical_path; do
	run "$CC" $CFLAGS -I"$shim" -o "$out/$p" "$here/$p.c"
done

run "$CC" $CFLAGS -o "$out/amdahl" "$here/amdahl.c"
run "$CC" $CFLAGS -o "$out/init_sleep" "$here/init_sleep.c"
# A C++ program built with the MPI C++ wrapper, which links the MPI C++
# bindings library (Open MPI's calls MPI from a static constructor). Open
# MPI's C++ headers do not compile with -Wcast-function-type.
if command -v "$CXX" >/dev/null 2>&1; then
	run "$CXX" -O2 -g -std=c++17 -Wall -Wextra -Werror -Wno-cast-function-type \
		-o "$out/imbalance_cxx" "$here/imbalance_cxx.cpp"
else
	echo "$0: warning: MPI C++ compiler wrapper '$CXX' not found; imbalance_cxx not built" >&2
fi
for p in thread_multiple thread_churn; do
	run "$CC" $CFLAGS -pthread -o "$out/$p" "$here/$p.c"
done
run "$CC" $CFLAGS -o "$out/own_wrappers" "$here/own_wrappers.c"
# LeWI's example without OpenMP: the MPI-only form (scripts/bench-lewi.sh).
run "$CC" $CFLAGS -Wno-unknown-pragmas -o "$out/lewi_imbalance.mpi" "$here/lewi/lewi_imbalance.c"
# MPI-4 Sessions: only where mpi.h declares MPI 4 (MPICH 4; not Open MPI 4).
if printf '#include <mpi.h>\n#if MPI_VERSION < 4\n#error\n#endif\n' | "$CC" -E -x c - >/dev/null 2>&1; then
	run "$CC" $CFLAGS -o "$out/sessions" "$here/sessions.c"
fi
# A PMPI tool to preload together with popmon's library.
run "$CC" $CFLAGS -fPIC -shared -o "$out/libpmpi_tool.so" "$here/pmpitool/pmpi_tool.c"
# The demo with MPI linked statically (MPICH ships libmpich.a): popmon cannot
# see its calls and must say so.
if [ "${2:-}" = mpich ] && [ -f /usr/lib/x86_64-linux-gnu/libmpich.a ]; then
	inc=$("$CC" -show | tr ' ' '\n' | sed -n 's/^-I//p' | head -n 1)
	run gcc $CFLAGS -I"$inc" -o "$out/imbalance_static" "$here/imbalance.c" \
		/usr/lib/x86_64-linux-gnu/libmpich.a -lpthread -lhwloc -lucp -lucs -lm ||
		echo "$0: warning: imbalance_static not built (libmpich.a does not link here)" >&2
fi

if command -v "$FC" >/dev/null 2>&1; then
	# -J keeps compiler-generated module files out of the source tree.
	run "$FC" $FFLAGS -J"$out" -o "$out/imbalance_f" "$here/imbalance_f.f90"
	run "$FC" $FFLAGS -J"$out" -o "$out/imbalance_f08" "$here/imbalance_f08.f90"
	# The region API module is compiled with the program (nothing to link).
	run "$FC" $FFLAGS -J"$out" -c -o "$out/popmon_mod.o" "$shim/popmon.f90"
	run "$FC" $FFLAGS -J"$out" -o "$out/regions_f" "$here/regions_f.f90" "$out/popmon_mod.o"
	run "$FC" $FFLAGS -J"$out" -o "$out/talp_api_f" "$here/talp_api_f.f90" "$out/popmon_mod.o" \
		-L"$out" -Wl,-rpath,"$out" -ldlb
else
	echo "$0: warning: Fortran compiler wrapper '$FC' not found; imbalance_f not built" >&2
fi

# OpenMP and hybrid MPI+OpenMP programs, once per OpenMP compiler/runtime.
GCC=${GCC:-gcc}
CLANG=${CLANG:-clang}
OMPFLAGS="$CFLAGS -fopenmp"
# Whether compiler $1 compiles and links an OpenMP program (runtime present).
have_openmp() {
	command -v "$1" >/dev/null 2>&1 || return 1
	printf '#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n' |
		"$1" -fopenmp -x c -o "$out/.omp_probe" - >/dev/null 2>&1
	rc=$?
	rm -f "$out/.omp_probe"
	return $rc
}
for pair in "gcc $GCC" "clang $CLANG"; do
	suffix=${pair%% *} cc=${pair#* }
	if ! have_openmp "$cc"; then
		echo "$0: warning: '$cc -fopenmp' cannot build OpenMP programs (compiler or OpenMP runtime missing); omp_*.$suffix and hybrid_*.$suffix not built" >&2
		continue
	fi
	for p in omp_serial omp_imbalance; do
		run "$cc" $OMPFLAGS -I"$shim" -o "$out/$p.$suffix" "$here/$p.c"
	done
	# Nested teams and regions started inside parallel regions, TALP-instrumented.
	run "$cc" $OMPFLAGS -I"$dlbinc" -o "$out/omp_nested.$suffix" "$here/omp_nested.c" \
		-L"$out" -Wl,-rpath,"$out" -ldlb
	for p in hybrid_phases hybrid_mpi_idle team_override malleable; do
		run env OMPI_CC="$cc" MPICH_CC="$cc" "$CC" $OMPFLAGS -I"$shim" -o "$out/$p.$suffix" "$here/$p.c"
	done
	# LeWI's designed imbalance (examples/lewi).
	run env OMPI_CC="$cc" MPICH_CC="$cc" "$CC" $OMPFLAGS -o "$out/lewi_imbalance.$suffix" "$here/lewi/lewi_imbalance.c"
done
