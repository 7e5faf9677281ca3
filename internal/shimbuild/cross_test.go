package shimbuild

import (
	"context"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCrossAArch64 builds the library for AArch64 with Debian's cross
// compiler against each MPI's headers (-Werror, as for x86-64) and checks
// that its hand-written entry points link into a shared object: every
// MPI_ and PMPI_ name a defined function in .text, the PMPI_ stubs and the
// lazy resolver included. Running them needs an AArch64 machine or
// qemu-user (scripts/check-aarch64.sh).
func TestCrossAArch64(t *testing.T) {
	cc, err := exec.LookPath("aarch64-linux-gnu-gcc")
	if err != nil {
		t.Skip("no aarch64-linux-gnu-gcc (Debian package gcc-aarch64-linux-gnu): AArch64 build not checked")
	}
	sources, err := sourceFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range []string{"openmpi", "mpich"} {
		t.Run(family, func(t *testing.T) {
			wrapper, err := exec.LookPath("mpicc." + family)
			if err != nil {
				t.Skipf("no mpicc.%s", family)
			}
			show, err := exec.Command(wrapper, "-show").Output()
			if err != nil {
				t.Fatalf("%s -show: %v", wrapper, err)
			}
			var incs []string
			for _, f := range strings.Fields(string(show)) {
				if strings.HasPrefix(f, "-I") {
					incs = append(incs, f)
				}
			}
			dir := t.TempDir()
			var cfiles []string
			if err := writeTree(dir, sources); err != nil {
				t.Fatal(err)
			}
			for name := range sources {
				if strings.HasSuffix(name, ".c") {
					cfiles = append(cfiles, name)
				}
			}
			sort.Strings(cfiles)
			args := append([]string{"-std=c11", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror",
				"-fvisibility=default", "-D_GNU_SOURCE", versionDefine(), "-I."}, incs...)
			args = append(args, "-o", "libpopmon.so")
			args = append(args, cfiles...)
			args = append(args, "-ldl", "-lpthread")
			cmd := exec.CommandContext(context.Background(), cc, args...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("AArch64 build failed: %v\n%s", err, out)
			}
			f, err := elf.Open(filepath.Join(dir, "libpopmon.so"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Machine != elf.EM_AARCH64 {
				t.Fatalf("machine %v, want AArch64", f.Machine)
			}
			for _, tag := range []elf.DynTag{elf.DT_TEXTREL} {
				if v, _ := f.DynValue(tag); len(v) > 0 {
					t.Errorf("the library has %v: the stubs need text relocations", tag)
				}
			}
			syms, err := f.DynamicSymbols()
			if err != nil {
				t.Fatal(err)
			}
			text := f.Section(".text")
			defined := map[string]elf.Symbol{}
			for _, s := range syms {
				if s.Section != elf.SHN_UNDEF {
					defined[s.Name] = s
				}
			}
			for _, name := range []string{"MPI_Send", "PMPI_Send", "MPI_Init", "PMPI_Init", "MPI_Finalize",
				"PMPI_Finalize", "MPI_Wtime", "PMPI_Allreduce", "mpi_allreduce_", "MPI_Comm_c2f"} {
				s, ok := defined[name]
				if !ok {
					t.Errorf("%s is not defined by the library", name)
					continue
				}
				if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value < text.Addr || s.Value >= text.Addr+text.Size {
					t.Errorf("%s: type %v at %#x, want a function in .text", name, elf.ST_TYPE(s.Info), s.Value)
				}
			}
			if s, ok := defined["popmon_lazy_real"]; ok {
				t.Errorf("popmon_lazy_real is exported (%#x): it must stay hidden", s.Value)
			}
		})
	}
}
