#!/bin/bash
# Builds libpopmon from shim/ with the MPI compiler wrapper of MPI and one
# extra compiler flag, as popmon builds it, for benchmark baselines; prints
# the library's path.
#   scripts/shim-variant.sh openmpi|mpich -DPOPMON_NO_COUNTERS OUTDIR
set -euo pipefail
mpi=$1 flag=$2 dir=$3
# The version popmon passes (popmon.Version in embed.go; internal/shimbuild).
version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' embed.go)
rm -rf "$dir" && mkdir -p "$dir"/base "$dir"/mpi && cp shim/*.c shim/*.h "$dir"/ &&
	cp shim/base/*.c shim/base/*.h "$dir"/base/ && cp shim/mpi/*.c shim/mpi/*.h "$dir"/mpi/
(cd "$dir" && "mpicc.$mpi" -std=c11 -O2 -fPIC -shared -Wall -Wextra -fvisibility=default -D_GNU_SOURCE \
	-DPOPMON_VERSION="\"$version\"" "$flag" -I. -o libpopmon-variant.so ./*.c ./base/*.c ./mpi/*.c -ldl -lpthread)
echo "$dir/libpopmon-variant.so"
