# Copyright Spack Project Developers. See COPYRIGHT file for details.
#
# SPDX-License-Identifier: (Apache-2.0 OR MIT)

import json
import os

from spack_repo.builtin.build_systems import go
from spack_repo.builtin.build_systems.go import GoPackage

from spack.package import *


class Popmon(GoPackage):
    """popmon measures how efficiently an MPI (and OpenMP, CUDA, HIP) program
    uses the machine in the POP methodology's terms (parallel efficiency =
    communication efficiency x load balance), the way BSC's TALP reports them.
    It is one static binary; its measurement library is built on first use
    against the MPI of the user's job and preloaded into it, so programs are
    measured without rebuilding them."""

    homepage = "https://github.com/popmon/popmon"
    url = "https://github.com/popmon/popmon/archive/refs/tags/v0.1.0.tar.gz"
    git = "https://github.com/popmon/popmon.git"

    # Release versions are added with `spack checksum popmon VERSION` when
    # their tag exists; popmon's CI adds one for a tarball of the tree it
    # tests (scripts/packaging-check.sh).
    version("main", branch="main")

    # The MPI question. popmon does not link MPI: the binary is static Go
    # (CGO_ENABLED=0) and the measurement library is compiled on first use,
    # per user, with the compiler wrapper of the MPI the measured job runs
    # (found behind the job's launcher), so one popmon serves every MPI of a
    # site. A run dependency on "mpi" would pin it to one provider and put
    # that provider's mpicc and mpirun first on PATH at `spack load popmon`,
    # in front of the MPI the user chose: a job launched with another MPI's
    # mpirun would then be measured with a library built for the wrong MPI
    # (popmon refuses it, and the user sees no metrics). So by default there
    # is no MPI dependency. A site with one MPI can pin it: +mpi makes that
    # MPI a run dependency and sets POPMON_MPICC to its compiler wrapper.
    variant(
        "mpi",
        default=False,
        description="Pin popmon to one MPI: depend on it at run time and set POPMON_MPICC",
    )

    depends_on("go@1.22:", type="build")
    depends_on("mpi", type="run", when="+mpi")

    #: popmon's Python module (regions, runtime metrics), importable outside
    #: `popmon run` too (it then does nothing); `popmon run` puts its own
    #: copy, with the DLB/TALP answer `dlb`, first on the job's PYTHONPATH.
    python_dir = join_path("lib", "popmon", "python")

    def setup_run_environment(self, env: EnvironmentModifications) -> None:
        # PATH gets prefix/bin from Spack itself. The library cache is left
        # to popmon's own per-user default ($XDG_CACHE_HOME/popmon/lib, else
        # $HOME/.cache/popmon/lib, created private and checked at every use):
        # a module file is written once for all users, so a path set here
        # would be the same for everyone (and popmon refuses a cache others
        # can write). Never in the install prefix: it is shared and read-only.
        env.prepend_path("PYTHONPATH", join_path(self.prefix, self.python_dir))
        if self.spec.satisfies("+mpi"):
            env.set("POPMON_MPICC", join_path(self.spec["mpi"].prefix.bin, "mpicc"))

    def _mpi_tools(self):
        """The MPI compiler wrapper and launcher the tests use: the pinned MPI's
        with +mpi, else the first on PATH (as a user's job would)."""
        if self.spec.satisfies("+mpi"):
            bindir = self.spec["mpi"].prefix.bin
            return which(join_path(bindir, "mpicc")), which(join_path(bindir, "mpirun"))
        return which("mpicc"), which("mpirun") or which("mpiexec")

    def test_version(self):
        """popmon --version reports the installed version"""
        popmon = which(self.prefix.bin.popmon)
        out = popmon("--version", output=str, error=str).strip()
        assert out.startswith("popmon "), f"unexpected version line: {out!r}"
        if not self.spec.satisfies("@main"):
            assert str(self.spec.version) in out, f"{out!r} is not version {self.spec.version}"

    def test_imbalance(self):
        """build the library for the MPI and measure the bundled imbalance example"""
        mpicc, mpirun = self._mpi_tools()
        if mpicc is None or mpirun is None:
            raise SkipTest("no MPI compiler wrapper and launcher (mpicc, mpirun) on PATH")
        src = join_path(self.test_suite.current_test_cache_dir, "examples")
        mpicc("-O2", f"-I{src}", "-o", "imbalance", join_path(src, "imbalance.c"))

        # The library is built into the user's own cache, as popmon run does.
        env = {}
        if os.geteuid() == 0:
            # Open MPI refuses to run as root (CI containers) without these.
            env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
            env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
        popmon = which(self.prefix.bin.popmon)
        # Rank r works (r+1)*50 ms per iteration before an MPI_Allreduce:
        # with 2 ranks the load balance is mean/max = 75/100 = 0.75
        # (examples/imbalance.c).
        popmon(
            "run",
            "-o",
            "imbalance.json",
            "--",
            mpirun.path,
            "-np",
            "2",
            "./imbalance",
            extra_env=env,
        )
        out = popmon("report", "--format", "json", "imbalance.json", output=str, error=str)
        report = json.loads(out)
        glob = [r for r in report["regions"] if r["name"] == "Global"][0]
        lb = glob["metrics"]["mpi_load_balance"]
        print(f"popmon measured load balance {lb:.3f} (designed 0.75)")
        # 0.05: scheduling noise of a shared login node on 0.5 s of work.
        assert abs(lb - 0.75) <= 0.05, f"load balance {lb:.3f}, designed 0.75"


class GoBuilder(go.GoBuilder):
    def setup_build_environment(self, env: EnvironmentModifications) -> None:
        super().setup_build_environment(env)
        # A static binary, built offline: popmon has no Go dependencies
        # (go.mod requires nothing), so the module proxy is never needed.
        env.set("CGO_ENABLED", "0")
        env.set("GOPROXY", "off")

    @property
    def build_args(self):
        args = super().build_args
        args.append("./cmd/popmon")
        return args

    @run_after("install")
    def install_extras(self):
        pkg = self.pkg
        src = self.build_directory
        python = join_path(pkg.prefix, pkg.python_dir)
        # Only the `popmon` package: a `dlb` module on PYTHONPATH would
        # shadow DLB's own bindings for programs run under DLB.
        install_tree(join_path(src, "python", "popmon"), join_path(python, "popmon"))
        install_tree(join_path(src, "examples"), pkg.prefix.share.popmon.examples)
        cache_extra_test_sources(pkg, [join_path("examples", "imbalance.c")])
        cache_extra_test_sources(pkg, [join_path("examples", "work.h")])
