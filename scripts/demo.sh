#!/bin/sh
# Builds the examples with the default MPI and measures the load-imbalance
# demo on 4 ranks: `popmon run -- mpirun -np 4 imbalance`.
set -eu
bin=${1:-bin/popmon}
out=${2:-build/examples}
./examples/build.sh "$out"
launcher=mpirun
extra=""
if mpirun --version 2>&1 | grep -qi -e "open mpi" -e openrte; then
	extra="--oversubscribe"
fi
# build/examples/demo.json is this script's own output: a second `make demo`
# replaces it (--force) instead of refusing.
echo "+ $bin run --force -o $out/demo.json -- $launcher $extra -np 4 $out/imbalance" >&2
# shellcheck disable=SC2086
exec "$bin" run --force -o "$out/demo.json" -- $launcher $extra -np 4 "$out/imbalance"
