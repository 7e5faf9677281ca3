#!/bin/bash
# packaging-check.sh: installs popmon the way HPC centres do, offline, and
# checks that what they get works (issue 36; docs/install.md).
#
#   scripts/packaging-check.sh [WORKDIR]
#
# With the offline copies of Spack 1.1, spack-packages, clingo and EasyBuild
# in ../shared/packaging (beside the repository; $POPMON_SHARED overrides
# ../shared), and nothing from the network:
#   1. a tarball of the working tree, popmon-VERSION.tar.gz, and its sha256;
#   2. Spack: the recipe (packaging/spack) with that version added, go, gcc,
#      Open MPI and MPICH as externals; `spack audit packages popmon`,
#      `spack style` on the recipe, `spack install` (and of popmon+mpi: its
#      POPMON_MPICC), `spack test run popmon`
#      (it builds the library and measures examples/imbalance.c);
#   3. `spack load popmon`, then `popmon doctor` and
#      `popmon run -- mpirun -np 2 ./imbalance`: load balance 0.75 +- 0.05;
#   4. Lmod: `spack module lmod refresh`, `module load popmon`, the same;
#   5. EasyBuild: `eb --check-contrib` and `eb` on the easyconfig
#      (packaging/easybuild) with that checksum, its sanity checks
#      (`popmon --version`, `popmon doctor`), `module load popmon`, the same.
# Without ../shared/packaging it prints one line saying it was skipped and
# exits 0. It needs Debian's lmod, flake8, black and isort
# (scripts/install-deps.sh test). WORKDIR (default: a temporary folder,
# removed afterwards) keeps everything when given.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
shared=${POPMON_SHARED:-$root/../shared}/packaging
if [ ! -d "$shared" ]; then
	echo "packaging check SKIPPED: no $shared (the offline Spack, clingo and EasyBuild copies)"
	exit 0
fi
shared=$(cd "$shared" && pwd)

t0=$(date +%s)
step() { printf '\n== packaging check [%3ds] %s\n' "$(($(date +%s) - t0))" "$*"; }
fail() {
	echo "packaging check FAILED: $*" >&2
	exit 1
}

if [ $# -ge 1 ]; then
	work=$1
	mkdir -p "$work"
	work=$(cd "$work" && pwd)
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/popmon-packaging.XXXXXX")
	trap 'rm -rf "$work"' EXIT
fi
chmod 700 "$work"

export PATH="$PATH:/usr/local/go/bin"
# Go's build cache stays the user's (the test suite's builds warm it): the
# Spack and EasyBuild builds then compile popmon only, not the standard library.
GOCACHE=$(go env GOCACHE)
export GOCACHE
# Everything below writes into $work: its own home (popmon's library cache,
# Spack's and EasyBuild's per-user files), temporary folder and configuration.
export HOME="$work/home" TMPDIR="$work/tmp"
mkdir -p "$HOME" "$TMPDIR"
chmod 700 "$HOME" "$TMPDIR"
unset XDG_CACHE_HOME POPMON_CACHE_DIR POPMON_MPICC PYTHONPATH || true
# Nothing comes from the network: a download anything tries (EasyBuild's
# ConfigureMake family asks for a recent config.guess, and fails over to none)
# goes to a closed port.
export http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9
unset no_proxy NO_PROXY || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1

version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' "$root/embed.go")
[ -n "$version" ] || fail "no version in embed.go"

step "source tarball popmon-$version.tar.gz of the working tree"
mirror="$work/mirror"
mkdir -p "$mirror/popmon"
tarball="$mirror/popmon/popmon-$version.tar.gz"
(
	cd "$root"
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
			--transform "s,^,popmon-$version/," -cf - | gzip -n >"$tarball"
)
sha256=$(sha256sum "$tarball" | cut -d' ' -f1)
echo "$tarball sha256 $sha256"
# A mirror's layout (what `spack mirror create` writes): the tarball by its
# checksum, and by name.
mkdir -p "$mirror/_source-cache/archive/${sha256:0:2}"
ln "$tarball" "$mirror/_source-cache/archive/${sha256:0:2}/$sha256.tar.gz"

step "Spack 1.1, spack-packages, clingo from $shared"
cd "$work"
tar xzf "$shared/spack-1.1.0.tar.gz"
spack_root="$work/spack-1.1.0"
builtin="$work/spack-packages-2025.11.0/repos/spack_repo/builtin"
# Spack indexes a repository by loading every one of its package files: the
# first command over the whole builtin repository (8616 packages) costs 2-3
# minutes on 2 cores. The check uses the builtin repository's own files, but
# only the packages the concretization of popmon (and popmon+mpi) reaches
# with these externals (found by trying; a package missing from this list
# fails the check with Spack's "not found" message). POPMON_PACKAGING_FULL=1
# uses the whole repository.
if [ "${POPMON_PACKAGING_FULL:-0}" = 1 ]; then
	tar xzf "$shared/spack-packages-2025.11.0.tar.gz"
else
	reached="binutils boost compiler_wrapper cuda elfutils gcc gcc_runtime glibc go hip hwloc icu4c
		libarchive llvm llvm_amdgpu mbedtls mpich musl nccl ncurses openmpi prrte ucc ucx valgrind
		yaksa zstd"
	members="__init__.py repo.yaml build_systems"
	for p in $reached; do
		members="$members packages/$p"
	done
	# shellcheck disable=SC2086
	tar xzf "$shared/spack-packages-2025.11.0.tar.gz" \
		$(printf "spack-packages-2025.11.0/repos/spack_repo/builtin/%s " $members)
fi
# Spack's solver imports clingo: the prebuilt module, else built from its source.
clingo="$work/clingo"
tar xzf "$shared/clingo-5.8.0-debian12-py311-x86_64.tar.gz"
mv clingo-5.8.0 "$clingo"
if ! LD_LIBRARY_PATH="$clingo/lib" PYTHONPATH="$clingo/python" /usr/bin/python3 -c 'import clingo' 2>/dev/null; then
	echo "the prebuilt clingo does not import here: building it from source (5-6 min)"
	rm -rf "$clingo"
	tar xzf "$shared/clingo-5.8.0-src.tar.gz" -C "$work" --one-top-level=clingo-src --strip-components=1
	cmake -S "$work/clingo-src" -B "$work/clingo-build" -DCMAKE_BUILD_TYPE=Release \
		-DCLINGO_BUILD_APPS=OFF -DCLINGO_BUILD_WITH_LUA=OFF -DCLASP_INSTALL_LIB=ON \
		-DCLASP_WITH_THREADS=ON -DCLINGO_BUILD_WITH_PYTHON=ON -DCLINGO_REQUIRE_PYTHON=ON \
		-DPYCLINGO_USE_INSTALL_PREFIX=ON -DPYCLINGO_USER_INSTALL=OFF \
		-DPYCLINGO_INSTALL_DIR="$clingo/python" -DCMAKE_INSTALL_PREFIX="$clingo" \
		-DPython_EXECUTABLE=/usr/bin/python3 -DCLINGO_BUILD_PY_SHARED=OFF >/dev/null
	cmake --build "$work/clingo-build" -j "$(nproc)" --target install >/dev/null
fi
export PYTHONPATH="$clingo/python" LD_LIBRARY_PATH="$clingo/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SPACK_PYTHON=/usr/bin/python3 SPACK_DISABLE_LOCAL_CONFIG=1
export SPACK_USER_CONFIG_PATH="$work/spack-user" SPACK_USER_CACHE_PATH="$work/spack-cache"
spack() { "$spack_root/bin/spack" "$@"; }

# The recipe as committed, with this tree's tarball added as a version (what
# `spack checksum --add-to-package` does at a release).
repo="$work/repos/spack_repo/popmon"
mkdir -p "$(dirname "$repo")"
cp -r "$root/packaging/spack/spack_repo/popmon" "$repo"
recipe="$repo/packages/popmon/package.py"
grep -q '^    version("main", branch="main")$' "$recipe" || fail "no version(\"main\") line in the recipe"
sed -i "s|^    version(\"main\", branch=\"main\")\$|    version(\"$version\", sha256=\"$sha256\")\n&|" "$recipe"

gcc_version=$(gcc -dumpfullversion)
go_version=$(go env GOVERSION | sed 's/^go//')
ompi_version=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v\([0-9.]*\).*/\1/p')
mpich_version=$(mpichversion 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*\([0-9.]*\).*/\1/p')
[ -n "$ompi_version" ] && [ -n "$mpich_version" ] || fail "Open MPI ($ompi_version) or MPICH ($mpich_version) not found"
etc="$spack_root/etc/spack"
cat >"$etc/repos.yaml" <<EOF
repos:
  popmon: $repo
  builtin: $builtin
EOF
cat >"$etc/mirrors.yaml" <<EOF
mirrors::
  local: file://$mirror
EOF
cat >"$etc/bootstrap.yaml" <<EOF
bootstrap:
  enable: false
EOF
cat >"$etc/config.yaml" <<EOF
config:
  build_jobs: $(nproc)
  build_stage: [$work/spack-stage]
  test_stage: $work/spack-tests
EOF
# Go, the compiler and both MPIs are the machine's (externals, never built).
cat >"$etc/packages.yaml" <<EOF
packages:
  go:
    externals:
    - spec: go@$go_version
      prefix: $(go env GOROOT)
    buildable: false
  gcc:
    externals:
    - spec: gcc@$gcc_version languages:='c,c++,fortran'
      prefix: /usr
      extra_attributes:
        compilers:
          c: /usr/bin/gcc
          cxx: /usr/bin/g++
          fortran: /usr/bin/gfortran
    buildable: false
  openmpi:
    externals:
    - spec: openmpi@$ompi_version
      prefix: /usr
    buildable: false
  mpich:
    externals:
    - spec: mpich@$mpich_version
      prefix: /usr
    buildable: false
  mpi:
    buildable: false
EOF
cat >"$etc/modules.yaml" <<EOF
modules:
  default:
    enable: [lmod]
    roots:
      lmod: $work/modules
    lmod:
      core_compilers: [gcc@$gcc_version]
      hierarchy: []
      hash_length: 0
      all:
        autoload: none
EOF
spack --version

step "spack audit packages popmon"
spack audit packages popmon

step "spack style on the recipe"
# The tools are Debian's flake8, black and isort; mypy is not run (Spack's
# own configuration for it checks Spack's tree, not a package repository).
# Spack's style configuration (its pyproject.toml, .flake8) is the one
# spack-packages' package files are checked with.
# Spack's .flake8 gets the exceptions spack-packages' .flake8 has for package
# files (F403, F405, F821: `from spack.package import *`), for this recipe.
sed -i "s|^per-file-ignores =\$|&\\n  $root/packaging/spack/*/package.py:F403,F405,F821|" "$spack_root/.flake8"
grep -qF "$root/packaging/spack/*/package.py:F403" "$spack_root/.flake8" || fail "could not add the package-file exceptions to Spack's .flake8"
spack style --root "$spack_root" -t isort -t black -t flake8 \
	"$root/packaging/spack/spack_repo/popmon/packages/popmon/package.py"

step "spack install popmon@$version and popmon@$version+mpi ^openmpi"
spack install --fail-fast popmon@$version~mpi
spack install --fail-fast "popmon@$version+mpi ^openmpi"
spack find -lv popmon
# +mpi pins Open MPI: its mpicc becomes POPMON_MPICC. Checked, then removed
# (one popmon@$version is left for the rest).
pinned=$(spack load --sh "popmon@$version+mpi")
echo "$pinned" | grep -E "POPMON_MPICC=('?)/usr/bin/mpicc\1;" ||
	fail "spack load popmon+mpi ^openmpi does not set POPMON_MPICC=/usr/bin/mpicc"
if spack load --sh "popmon@$version~mpi" | grep POPMON_MPICC; then
	fail "spack load popmon~mpi sets POPMON_MPICC"
fi
spack uninstall -y "popmon@$version+mpi"

step "spack test run popmon"
spack test run --alias popmon-check popmon@$version || fail "spack test run popmon failed"
testlog=$(cat "$work"/spack-tests/*/popmon-"$version"-*-test-out.txt)
for part in test_imbalance test_version; do
	echo "$testlog" | grep -q "^PASSED: Popmon::$part\$" || fail "spack test run popmon: $part did not pass"
done
echo "$testlog" | grep "^popmon measured load balance" || fail "spack test run popmon: no load balance in the test's log"

# measure_imbalance LABEL: popmon doctor must be clean and the bundled
# imbalance example, run on 2 ranks, must show its designed load balance.
examples="$work/examples"
mkdir -p "$examples"
mpicc -O2 -I"$root/examples" -o "$examples/imbalance" "$root/examples/imbalance.c"
measure_imbalance() {
	local label=$1 out="$examples/$1.json"
	command -v popmon >/dev/null || fail "$label: popmon not on PATH"
	popmon --version
	popmon doctor >"$examples/$label.doctor" 2>&1 || {
		cat "$examples/$label.doctor"
		fail "$label: popmon doctor failed"
	}
	if grep '^\[FAIL\]' "$examples/$label.doctor"; then
		fail "$label: popmon doctor is not clean"
	fi
	grep -F "library cache" "$examples/$label.doctor"
	grep -qF "library cache          $HOME/.cache/popmon/lib " "$examples/$label.doctor" ||
		fail "$label: the library cache is not the per-user $HOME/.cache/popmon/lib"
	(cd "$examples" && popmon run -o "$out" -- mpirun -np 2 ./imbalance)
	local lb
	lb=$(popmon report --format json "$out" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
print([g for g in r["regions"] if g["name"] == "Global"][0]["metrics"]["mpi_load_balance"])')
	/usr/bin/python3 -c "import sys; lb = float(sys.argv[1]); sys.exit(abs(lb - 0.75) > 0.05)" "$lb" ||
		fail "$label: load balance $lb, designed 0.75 +- 0.05"
	echo "$label: popmon measured load balance $lb (designed 0.75)"
}

step "spack load popmon; popmon doctor; popmon run -- mpirun -np 2 ./imbalance"
(
	eval "$(spack load --sh popmon@$version)"
	echo "$PYTHONPATH" | grep -q "popmon/python" || fail "spack load: PYTHONPATH lacks popmon's Python module"
	/usr/bin/python3 -c 'import popmon; assert not popmon.measured()'
	measure_imbalance spack-load
)

step "module load popmon (Lmod, Spack's module)"
spack module lmod refresh -y popmon
lmod_init=/usr/share/lmod/lmod/init/bash
[ -r "$lmod_init" ] || fail "no Lmod ($lmod_init): install Debian's lmod"
(
	set +u
	# shellcheck disable=SC1090
	. "$lmod_init"
	module use "$work/modules/linux-"*"/Core"
	module load popmon
	module list 2>&1
	set -u
	measure_imbalance spack-module
)

step "EasyBuild: eb --check-contrib, eb popmon-$version.eb"
for f in easybuild-framework easybuild-easyblocks; do
	tar xzf "$shared/$f.tar.gz" -C "$work"
done
eb_dir="$work/easyconfigs"
mkdir -p "$eb_dir"
easyconfig="$eb_dir/popmon-$version.eb"
sed "s|^checksums = .*|checksums = ['$sha256']|" "$root/packaging/easybuild/popmon-$version.eb" >"$easyconfig"
grep -q "^checksums = \['$sha256'\]" "$easyconfig" || fail "no checksums line in packaging/easybuild/popmon-$version.eb"
mkdir -p "$work/eb/sources/p/popmon"
cp "$tarball" "$work/eb/sources/p/popmon/"
(
	set +u
	# shellcheck disable=SC1090
	. "$lmod_init"
	set -u
	eb() {
		PYTHONPATH="$work/easybuild-framework:$work/easybuild-easyblocks" /usr/bin/python3 -m easybuild.main \
			--allow-use-as-root-and-accept-consequences --prefix="$work/eb" \
			--sourcepath="$work/eb/sources" --buildpath="$work/eb/build" --installpath="$work/eb/install" \
			--modules-tool=Lmod --module-syntax=Lua --filter-deps=Go --disable-cleanup-tmpdir \
			--tmpdir="$TMPDIR" "$@"
	}
	eb --check-contrib "$easyconfig"
	eb --robot-paths="$eb_dir" "$easyconfig"
	module use "$work/eb/install/modules/all"
	module load "popmon/$version"
	module list 2>&1
	measure_imbalance easybuild-module
)

step "passed"
