#!/bin/sh
# Installs what popmon needs to build, run its demo and run its tests on
# Debian/Ubuntu: Go, a C compiler, Open MPI and MPICH (side by side), gfortran,
# clang and LLVM's OpenMP runtime (libomp: OpenMP measurement through OMPT),
# and Chromium (the tests render the pages popmon generates in a headless browser);
# iproute2 for the tests' simulated cluster (scripts/cluster) and slurm-wlm
# for the Slurm on it (scripts/cluster/slurm-up.sh runs its own daemons with
# their own configuration and ports; the packaged services are not used);
# prometheus
# (with promtool) and tmux for the live-view tests (popmon serve, popmon top);
# python3-mpi4py (with python3) for the Python tests (Debian's mpi4py is built
# for Open MPI; MPICH's Python test calls MPI through ctypes); python3-pytest to
# run DLB's own functional TALP tests by hand (docs/coming-from-dlb.md); on x86-64 the
# AArch64 cross compiler (the tests build the library's AArch64 entry points);
# lmod, flake8, black and isort for the packaging check
# (scripts/packaging-check.sh: `module load`, `spack style`), and cmake and
# python3-cffi for its fallback build of clingo.
# As root it installs with apt-get; otherwise it prints the command to run.
set -eu

# `install-deps.sh` installs what the demo needs; `install-deps.sh test` also
# what the tests need (clang, Chromium, iproute2, slurm-wlm, prometheus, tmux,
# python3-mpi4py, strace, the AArch64 cross compiler, lmod, flake8, black, isort,
# cmake, python3-cffi).
pkgs="build-essential gfortran libopenmpi-dev openmpi-bin mpich libmpich-dev libomp-dev"
if [ "${1:-}" = test ]; then
	pkgs="$pkgs clang chromium fonts-dejavu-core iproute2 slurm-wlm prometheus tmux python3-mpi4py python3-pytest strace"
	pkgs="$pkgs lmod flake8 black isort cmake python3-cffi"
	if [ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ]; then
		pkgs="$pkgs gcc-aarch64-linux-gnu"
	fi
fi
have_go=1
command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || have_go=0
[ "$have_go" = 1 ] || pkgs="$pkgs golang-go"

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "popmon needs these Debian packages:$missing" >&2
	echo "install them with:  sudo apt-get update && sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq $missing >/dev/null
