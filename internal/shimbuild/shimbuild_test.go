package shimbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	popmon "github.com/popmon/popmon"
)

func TestSourcesEmbedded(t *testing.T) {
	src, err := sourceFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"core.c", "counters.c", "counters.h", "regions.c", "mpi/mpi.c", "output.c", "mpi/mpi_wrappers.c", "mpi_calls.h", "base/clock.h", "base/threads.c", "popmon.h", "popmon.f90"} {
		if _, ok := src[want]; !ok {
			t.Errorf("embedded sources lack %s", want)
		}
	}
}

// TestVersionOneSource: the library's version is popmon.Version, passed by
// the build; no C source spells it (so the two cannot drift), the built
// library writes exactly it into measurement files (TestBuildAndCache), and
// another version is another cache key (a version change rebuilds).
func TestVersionOneSource(t *testing.T) {
	src, err := sourceFiles()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range src {
		if strings.Contains(string(b), "#define POPMON_VERSION") {
			t.Errorf("%s defines POPMON_VERSION: the build passes it from popmon.Version", name)
		}
	}
	if !strings.Contains(string(src["output.c"]), "#error") {
		t.Error("output.c no longer refuses a build without POPMON_VERSION")
	}
	if libVersion != popmon.Version || versionDefine() != `-DPOPMON_VERSION="`+popmon.Version+`"` {
		t.Errorf("version define %s, want popmon.Version %s", versionDefine(), popmon.Version)
	}
	// scripts/shim-variant.sh and check-aarch64.sh read this line.
	if b, err := os.ReadFile(filepath.Join("..", "..", "embed.go")); err != nil || !strings.Contains(string(b), "\nconst Version = \""+popmon.Version+"\"\n") {
		t.Errorf("embed.go lacks the line the scripts read: const Version = %q (%v)", popmon.Version, err)
	}
	if strings.ContainsAny(popmon.Version, "\"\\ \n") {
		t.Errorf("version %q cannot be passed as a C string literal", popmon.Version)
	}
	opts := Options{NoMPI: true}
	before := sourcesID(opts, src)
	saved := libVersion
	libVersion = saved + ".1"
	after := sourcesID(opts, src)
	libVersion = saved
	if before == after {
		t.Error("the cache key does not depend on the version: a new version would reuse an old library")
	}
}

// TestBuildAndCache builds the library with every MPI installed here and
// checks the cache: same MPI reuses, the library exports the wrappers.
func TestBuildAndCache(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	var found bool
	for _, cc := range []string{"mpicc.openmpi", "mpicc.mpich", "mpicc"} {
		if _, err := exec.LookPath(cc); err != nil {
			continue
		}
		found = true
		t.Run(cc, func(t *testing.T) {
			cache := t.TempDir()
			opts := Options{MPICC: cc, CacheDir: cache, Werror: true}
			lib, err := Build(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if lib.Cached {
				t.Error("first build reported as cached")
			}
			if lib.MPI == "" {
				t.Error("MPI identity not described")
			}
			again, err := Build(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if !again.Cached || again.Path != lib.Path {
				t.Errorf("second build: cached=%v path=%s, want cached %s", again.Cached, again.Path, lib.Path)
			}
			assertVerified(t, again)
			so, err := os.ReadFile(lib.Path)
			if err != nil {
				t.Fatal(err)
			}
			if want := `"tool": {"name": "popmon", "version": "` + popmon.Version + `"}`; !strings.Contains(string(so), want) {
				t.Errorf("the library does not write %s", want)
			}
			out, err := exec.Command("nm", "-D", "--defined-only", lib.Path).Output()
			if err != nil {
				t.Skipf("nm unavailable: %v", err)
			}
			// Every exported name is popmon's or a deliberate compatibility
			// name (MPI's, DLB's, GNU libgomp's entry points, which
			// gomp.c interposes, the GPU runtimes' tool entry points,
			// the pthread_create wrapper).
			compat := regexp.MustCompile(`^(popmon_|MPI_|PMPI_|MPIX_|PMPIX_|mpi_|pmpi_|DLB_|GOMP_|InitializeInjection$|ompt_start_tool$|acc_register_library$|rocprofiler_configure$|rocprofiler_set_api_table$|pthread_create$|_init$|_fini$)`)
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				f := strings.Fields(line)
				if name := f[len(f)-1]; !compat.MatchString(name) {
					t.Errorf("%s exports %s: not popmon_ nor a compatibility name", lib.Path, name)
				}
			}
			for _, sym := range []string{"MPI_Send", "MPI_Allreduce", "mpi_send_", "mpi_allreduce__", "popmon_api_region_start", "DLB_MonitoringRegionStart", "DLB_TALP_CollectPOPMetrics", "DLB_TALP_QueryPOPNodeMetrics", "popmon_api_metrics", "popmon_f_metrics", "GOMP_parallel", "GOMP_barrier", "GOMP_task"} {
				if !strings.Contains(string(out), " "+sym+"\n") {
					t.Errorf("%s does not export %s", lib.Path, sym)
				}
			}
		})
	}
	if !found {
		t.Skip("no MPI compiler wrapper installed (apt-get install libopenmpi-dev or mpich)")
	}
}

func TestBuildNoMPI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	lib, err := Build(context.Background(), Options{NoMPI: true, CacheDir: t.TempDir(), Werror: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lib.Path); err != nil {
		t.Fatal(err)
	}
}

// TestFindBuilt: without a compiler (a compute node), Build uses the
// library of the cache built from the same sources for the job's MPI; it
// refuses to guess between MPIs, ignores a library that no longer matches
// its manifest, and says the compiler is missing when nothing qualifies.
func TestFindBuilt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	cache := t.TempDir()
	libs := map[string]string{} // family -> path
	for _, c := range []struct{ cc, family string }{{"mpicc.openmpi", "Open MPI"}, {"mpicc.mpich", "MPICH"}} {
		if _, err := exec.LookPath(c.cc); err != nil {
			continue
		}
		lib, err := Build(context.Background(), Options{MPICC: c.cc, CacheDir: cache, Werror: true})
		if err != nil {
			t.Fatal(err)
		}
		libs[c.family] = lib.Path
	}
	if len(libs) == 0 {
		t.Skip("no MPI compiler wrapper installed (apt-get install libopenmpi-dev or mpich)")
	}
	missing := filepath.Join(t.TempDir(), "no-such-mpicc")
	for family, path := range libs {
		lib, err := Build(context.Background(), Options{MPICC: missing, CacheDir: cache, Werror: true, MPIFamily: family})
		if err != nil {
			t.Fatalf("%s without a compiler: %v", family, err)
		}
		if lib.Path != path || !lib.Cached || !strings.HasPrefix(lib.MPI, family) {
			t.Errorf("%s without a compiler: %+v, want the cached %s", family, lib, path)
		}
	}
	_, err := Build(context.Background(), Options{MPICC: missing, CacheDir: cache, Werror: true})
	if len(libs) > 1 && (err == nil || !strings.Contains(err.Error(), "holds libraries for")) {
		t.Errorf("two MPIs, no family: %v, want a refusal to guess", err)
	}
	// Other options (no -Werror) are other sources: not found.
	if _, err := Build(context.Background(), Options{MPICC: missing, CacheDir: cache, MPIFamily: "MPICH"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("other build options: %v, want the missing compiler", err)
	}
	// A library that no longer matches its manifest is never used.
	for family, path := range libs {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte{0})
		f.Close()
		if lib, err := Build(context.Background(), Options{MPICC: missing, CacheDir: cache, Werror: true, MPIFamily: family}); err == nil {
			t.Errorf("%s: a damaged library was used: %s", family, lib.Path)
		}
	}
}
