#!/bin/sh
# Runs libpopmon's AArch64 entry points (the MPI_/PMPI_ stubs and the lazy
# resolver) on an x86-64 Debian machine through qemu-user, with MPICH for
# arm64 from Debian's multi-arch archive. On an AArch64 machine `make test`
# is the check; `make test` on x86-64 only builds and links the AArch64
# library (internal/shimbuild TestCrossAArch64).
#
# Needs (as root, once; this adds the arm64 architecture to dpkg):
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install -y gcc-aarch64-linux-gnu qemu-user libmpich12:arm64
# (libopenmpi3:arm64 cannot be installed beside the x86-64 Open MPI: apt
# removes the latter. To check the inert path with Open MPI too, unpack
# libopenmpi3:arm64 and its libraries with dpkg-deb -x into a folder and
# give its usr/lib/aarch64-linux-gnu as OMPI_ARM64_LIBDIR.)
#
# Checks, each with a designed answer:
#   1. examples/imbalance on 4 ranks measured: load balance 0.625 ± 0.03;
#   2. examples/own_wrappers: its PMPI_Allreduce calls go through the
#      library's PMPI stub and lazy resolver (the program's checksum is
#      right) and the report refuses the run, naming MPI_Allreduce;
#   3. with OMPI_ARM64_LIBDIR: a library built for Open MPI is inert in an
#      MPICH program (the program's result unchanged, one popmon: line).
set -eu
cd "$(dirname "$0")/.."
for c in aarch64-linux-gnu-gcc qemu-aarch64 mpicc.mpich mpiexec.mpich; do
	command -v "$c" >/dev/null || { echo "check-aarch64: $c is missing (see the top of $0)" >&2; exit 2; }
done
mpich=/usr/lib/aarch64-linux-gnu/libmpich.so.12
[ -e "$mpich" ] || { echo "check-aarch64: $mpich is missing: apt-get install libmpich12:arm64 (see the top of $0)" >&2; exit 2; }
GO=$(command -v go || echo /usr/local/go/bin/go)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/base" "$work/mpi"
cp shim/*.c shim/*.h "$work/" && cp shim/base/*.c shim/base/*.h "$work/base/" && cp shim/mpi/*.c shim/mpi/*.h "$work/mpi/"
incs() { "mpicc.$1" -show | tr ' ' '\n' | grep '^-I' | tr '\n' ' '; }
# The version popmon passes (popmon.Version in embed.go; internal/shimbuild).
version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' embed.go)
flags="-std=c11 -O2 -fPIC -shared -Wall -Wextra -Werror -fvisibility=default -D_GNU_SOURCE -DPOPMON_VERSION=\"$version\""
# shellcheck disable=SC2046,SC2086
(cd "$work" && aarch64-linux-gnu-gcc $flags -I. $(incs mpich) -o libpopmon-mpich.so *.c base/*.c mpi/*.c "$mpich" -ldl -lpthread)
for p in imbalance own_wrappers; do
	# shellcheck disable=SC2046
	aarch64-linux-gnu-gcc -O2 $(incs mpich) -o "$work/$p" "examples/$p.c" "$mpich" -lm
done
"$GO" build -o "$work/popmon" ./cmd/popmon
fail=0

echo "1. imbalance, 4 ranks"
mpiexec.mpich -n 4 qemu-aarch64 -L / -E LD_PRELOAD="$work/libpopmon-mpich.so" \
	-E POPMON_OUTPUT="$work/imbalance.json" "$work/imbalance" >"$work/out1" 2>&1
lb=$("$work/popmon" report --format csv "$work/imbalance.json" | awk -F, '$1=="Global" && $2=="mpi_load_balance" {print $NF}')
if awk -v v="$lb" 'BEGIN { exit !(v >= 0.595 && v <= 0.655) }'; then
	echo "   load balance $lb (designed 0.625): ok"
else
	echo "   load balance '$lb', want 0.625 ± 0.03: FAIL"; cat "$work/out1"; fail=1
fi

echo "2. own PMPI wrappers"
mpiexec.mpich -n 2 qemu-aarch64 -L / -E LD_PRELOAD="$work/libpopmon-mpich.so" \
	-E POPMON_OUTPUT="$work/own.json" "$work/own_wrappers" >"$work/out2" 2>&1
code=0
"$work/popmon" report "$work/own.json" >"$work/report2" 2>&1 || code=$?
if grep -q '^ok 15 (own wrapper: 5 calls)' "$work/out2" && [ "$code" = 3 ] && grep -q 'defines MPI_Allreduce itself' "$work/report2"; then
	echo "   result unchanged, run refused: ok"
else
	echo "   FAIL (report exit $code)"; cat "$work/out2" "$work/report2"; fail=1
fi

if [ -n "${OMPI_ARM64_LIBDIR:-}" ]; then
	echo "3. Open MPI library in an MPICH program"
	# shellcheck disable=SC2046,SC2086
	(cd "$work" && aarch64-linux-gnu-gcc $flags -I. $(incs openmpi) -o libpopmon-openmpi.so *.c \
		"$OMPI_ARM64_LIBDIR/libmpi.so.40" -Wl,-rpath-link,"$OMPI_ARM64_LIBDIR" -ldl -lpthread)
	mpiexec.mpich -n 2 qemu-aarch64 -L / -E LD_LIBRARY_PATH="$OMPI_ARM64_LIBDIR" \
		-E LD_PRELOAD="$work/libpopmon-openmpi.so" -E POPMON_OUTPUT="$work/inert.json" \
		"$work/imbalance" >"$work/out3" 2>&1
	if grep -q '^ok 45' "$work/out3" && grep -q 'built for Open MPI: not measuring' "$work/out3" && [ ! -e "$work/inert.json" ]; then
		echo "   inert, result unchanged: ok"
	else
		echo "   FAIL"; cat "$work/out3"; fail=1
	fi
fi
exit $fail
