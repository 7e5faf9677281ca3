package binscan

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// needTool skips the test when a program it builds with is missing.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed: this test builds real binaries with it", name)
	}
	return p
}

// run runs a build command and fails the test with its output.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// write writes a file, creating its directory.
func write(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

// lammpsLike builds dir/bin/lmp, which needs dir/lib/libwork.so.0 (found
// through RUNPATH $ORIGIN/../lib), which needs GNU libgomp; lmp itself does
// not. It returns dir.
func lammpsLike(t *testing.T) string {
	t.Helper()
	needTool(t, "gcc")
	dir := t.TempDir()
	write(t, filepath.Join(dir, "src", "work.c"), "double work(int n){double s=0;\n#pragma omp parallel for reduction(+:s)\nfor(int i=0;i<n;i++)s+=i;\nreturn s;}\n", 0o644)
	write(t, filepath.Join(dir, "src", "main.c"), "double work(int);\nint main(void){return work(10)>0?0:1;}\n", 0o644)
	lib := filepath.Join(dir, "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "gcc", "-shared", "-fPIC", "-fopenmp", "-Wl,-soname,libwork.so.0", "-o", filepath.Join(lib, "libwork.so.0"), filepath.Join(dir, "src", "work.c"))
	if err := os.Symlink("libwork.so.0", filepath.Join(lib, "libwork.so")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "gcc", "-o", filepath.Join(dir, "bin", "lmp"), filepath.Join(dir, "src", "main.c"),
		"-L"+lib, "-lwork", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib")
	return dir
}

// env is a minimal environment with PATH.
func env(path string, more ...string) []string {
	return append([]string{"PATH=" + path, "HOME=/nonexistent"}, more...)
}

func TestGompThroughSharedLibrary(t *testing.T) {
	dir := lammpsLike(t)
	res, err := scan(hostSystem, dir, []string{"bin/lmp", "-in", "in.lj"}, env("/usr/bin:/bin"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Programs) != 1 || len(res.Launchers) != 0 {
		t.Fatalf("programs %d launchers %d, want 1 and 0", len(res.Programs), len(res.Launchers))
	}
	p := res.Programs[0]
	if p.Kind != KindELF || p.Path != filepath.Join(dir, "bin", "lmp") {
		t.Fatalf("kind %q path %q (%s)", p.Kind, p.Path, p.Note)
	}
	if got, want := p.Gomp.String(), "lmp → libwork.so.0 → libgomp.so.1"; got != want {
		t.Errorf("gomp chain %q, want %q", got, want)
	}
	if p.LLVMOpenMP != nil || p.MPI != NoMPI || p.Static || len(p.Missing) != 0 {
		t.Errorf("llvm %v mpi %q static %v missing %v, want none", p.LLVMOpenMP, p.MPI, p.Static, p.Missing)
	}
	var found string
	for _, l := range p.Libs {
		if l.Name == "libwork.so.0" {
			found = l.Path
		}
	}
	if found != filepath.Join(dir, "bin", "..", "lib", "libwork.so.0") && found != filepath.Join(dir, "lib", "libwork.so.0") {
		t.Errorf("libwork.so.0 found at %q, want %s/lib/libwork.so.0 (RUNPATH $ORIGIN/../lib)", found, dir)
	}
	if w := p.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q, want none", w)
	}
}

func TestProgramBehindLaunchersAndWrappers(t *testing.T) {
	dir := lammpsLike(t)
	path := filepath.Join(dir, "bin") + ":/usr/bin:/bin"
	cases := []struct {
		name     string
		argv     []string
		launcher MPI
		slurm    bool
	}{
		{"openmpi", []string{"mpirun", "-np", "2", "--mca", "btl", "self,vader", "-x", "OMP_NUM_THREADS=2", "--map-by", "ppr:1:node", "lmp", "-in", "in.lj"}, OpenMPI, false},
		{"openmpi single dash", []string{"mpirun.openmpi", "-np", "2", "-H", "localhost", "--hostfile", "/dev/null", "--bind-to", "none", "lmp"}, OpenMPI, false},
		{"hydra", []string{"mpiexec.hydra", "-n", "2", "-genv", "OMP_NUM_THREADS", "2", "-ppn", "1", "-f", "hosts", "lmp", "-in", "in.lj"}, MPICH, false},
		{"mpich", []string{"mpirun.mpich", "-np", "2", "-genvall", "-l", "lmp"}, MPICH, false},
		{"srun", []string{"srun", "-n", "2", "--cpus-per-task", "2", "-l", "--export=ALL", "lmp"}, NoMPI, true},
		{"srun clustered", []string{"srun", "-ln2", "-c4", "lmp"}, NoMPI, true},
		{"wrappers outside", []string{"time", "-p", "env", "OMP_NUM_THREADS=4", "nice", "-n", "5", "mpirun", "-np", "2", "lmp"}, OpenMPI, false},
		{"wrappers inside", []string{"timeout", "-s", "INT", "10", "mpirun", "-np", "2", "numactl", "-C", "0-3", "taskset", "-c", "0", "stdbuf", "-oL", "nohup", "env", "-u", "X", "lmp"}, OpenMPI, false},
		{"direct through PATH", []string{"env", "-i", "PATH=" + path, "lmp"}, NoMPI, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.launcher != NoMPI {
				needTool(t, tc.argv[indexOf(tc.argv, "mpi")])
			}
			res, err := scan(hostSystem, dir, tc.argv, env(path))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Programs) != 1 {
				t.Fatalf("%d programs, want 1: %+v", len(res.Programs), res.Programs)
			}
			p := res.Programs[0]
			if p.Path != filepath.Join(dir, "bin", "lmp") {
				t.Fatalf("program %q at %q (%s), want lmp found through PATH", p.Arg, p.Path, p.Note)
			}
			if got := p.Gomp.String(); got != "lmp → libwork.so.0 → libgomp.so.1" {
				t.Errorf("gomp chain %q", got)
			}
			if tc.launcher == NoMPI && !tc.slurm {
				if len(res.Launchers) != 0 {
					t.Errorf("launchers %+v, want none", res.Launchers[0])
				}
				return
			}
			if len(res.Launchers) != 1 || p.Launcher != res.Launchers[0] {
				t.Fatalf("launchers %d, program's %v", len(res.Launchers), p.Launcher)
			}
			if l := res.Launchers[0]; l.MPI != tc.launcher || l.Slurm != tc.slurm {
				t.Errorf("launcher MPI %q slurm %v (%s), want %q %v", l.MPI, l.Slurm, l.How, tc.launcher, tc.slurm)
			}
		})
	}
}

// indexOf returns the index of the first word starting with prefix, or 0.
func indexOf(words []string, prefix string) int {
	for i, w := range words {
		if strings.HasPrefix(w, prefix) {
			return i
		}
	}
	return 0
}

func TestMPMDAndOpaquePrograms(t *testing.T) {
	dir := lammpsLike(t)
	needTool(t, "mpirun.openmpi")
	write(t, filepath.Join(dir, "bin", "job.sh"), "#!/bin/sh\nexec mpirun lmp\n", 0o755)
	path := filepath.Join(dir, "bin") + ":/usr/bin:/bin"
	res, err := scan(hostSystem, dir, []string{"mpirun.openmpi", "-np", "1", "lmp", "-in", "a", ":", "-np", "1", "-x", "A=1", "true", ":", "-n", "2", "job.sh", ":", "-np", "1", "missing-program"}, env(path))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Programs {
		got = append(got, p.Arg+"="+string(p.Kind))
	}
	want := []string{"lmp=elf", "true=elf", "job.sh=script", "missing-program=not found"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("programs %q, want %q", got, want)
	}
	if res.Programs[0].Gomp == nil || res.Programs[1].Gomp != nil {
		t.Errorf("gomp: lmp %v, true %v; want lmp only", res.Programs[0].Gomp, res.Programs[1].Gomp)
	}
	if note := res.Programs[2].Note; !strings.Contains(note, "a script") || !strings.Contains(note, "cannot see what it runs") {
		t.Errorf("script note %q", note)
	}
	if note := res.Programs[3].Note; note != "not found on PATH" {
		t.Errorf("missing program note %q", note)
	}

	// Appfiles, shells and a launcher without a program.
	for _, tc := range []struct {
		argv []string
		kind Kind
		note string
	}{
		{[]string{"mpirun.openmpi", "--app", "appfile"}, KindOpaque, "appfile"},
		{[]string{"mpiexec.hydra", "-configfile", "cfg"}, KindOpaque, "configuration file"},
		{[]string{"srun", "-n", "2", "--multi-prog", "progs.conf"}, KindOpaque, "--multi-prog"},
		{[]string{"mpirun.openmpi", "-np", "2"}, KindOpaque, "no program after"},
		{[]string{"bash", "-c", "mpirun lmp"}, KindScript, "a shell"},
		{[]string{"mpirun.openmpi", "-np", "2", "sh", "job.sh"}, KindScript, "a shell"},
		{[]string{"taskset", "-p", "0x1", "1234"}, KindOpaque, "no program is started"},
	} {
		res, err := scan(hostSystem, dir, tc.argv, env(path))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Programs) != 1 || res.Programs[0].Kind != tc.kind || !strings.Contains(res.Programs[0].Note, tc.note) {
			t.Errorf("%q: %+v, want one %s program noting %q", tc.argv, res.Programs, tc.kind, tc.note)
		}
	}
}

func TestOpenMPILooksInWorkingDirectory(t *testing.T) {
	dir := lammpsLike(t)
	needTool(t, "mpirun.openmpi")
	needTool(t, "mpiexec.hydra")
	bin := filepath.Join(dir, "bin")
	// PATH holds the two launchers only: a machine with LAMMPS installed has
	// an lmp in /usr/bin, which both would find first.
	path := t.TempDir()
	for _, l := range []string{"mpirun.openmpi", "mpiexec.hydra"} {
		full, err := exec.LookPath(l)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(full, filepath.Join(path, l)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := scan(hostSystem, bin, []string{"mpirun.openmpi", "-np", "1", "lmp"}, env(path))
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Programs[0]; p.Path != filepath.Join(bin, "lmp") {
		t.Errorf("Open MPI: lmp at %q (%s), want the working directory's", p.Path, p.Note)
	}
	res, err = scan(hostSystem, bin, []string{"mpiexec.hydra", "-n", "1", "lmp"}, env(path))
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Programs[0]; p.Kind != KindNotFound {
		t.Errorf("Hydra: lmp %q at %q, want not found (Hydra does not look in the working directory)", p.Kind, p.Path)
	}
}

func TestLibrarySearchOrder(t *testing.T) {
	needTool(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	write(t, filepath.Join(src, "b.c"), "int b(void){return 2;}\n", 0o644)
	write(t, filepath.Join(src, "a.c"), "int b(void);\nint a(void){return b();}\n", 0o644)
	write(t, filepath.Join(src, "main.c"), "int a(void);\nint main(void){return a()==2?0:1;}\n", 0o644)
	libs := filepath.Join(dir, "deps")
	if err := os.MkdirAll(libs, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "gcc", "-shared", "-fPIC", "-Wl,-soname,libb.so.1", "-o", filepath.Join(libs, "libb.so.1"), filepath.Join(src, "b.c"))
	if err := os.Symlink("libb.so.1", filepath.Join(libs, "libb.so")); err != nil {
		t.Fatal(err)
	}
	// liba has no search path of its own: libb is found only through what
	// it inherits (RPATH) or LD_LIBRARY_PATH.
	run(t, "gcc", "-shared", "-fPIC", "-Wl,-soname,liba.so.1", "-o", filepath.Join(libs, "liba.so.1"), filepath.Join(src, "a.c"), "-L"+libs, "-lb")
	if err := os.Symlink("liba.so.1", filepath.Join(libs, "liba.so")); err != nil {
		t.Fatal(err)
	}
	rpath := filepath.Join(dir, "rpath")
	runpath := filepath.Join(dir, "runpath")
	plain := filepath.Join(dir, "plain")
	run(t, "gcc", "-o", rpath, filepath.Join(src, "main.c"), "-L"+libs, "-la", "-Wl,--disable-new-dtags,-rpath,"+libs)
	run(t, "gcc", "-o", runpath, filepath.Join(src, "main.c"), "-L"+libs, "-la", "-Wl,--enable-new-dtags,-rpath,"+libs)
	run(t, "gcc", "-o", plain, filepath.Join(src, "main.c"), "-L"+libs, "-la", "-Wl,-rpath-link,"+libs)

	// A library of another machine and a file of random bytes, both named
	// libb.so.1, earlier in LD_LIBRARY_PATH: ld.so skips them.
	wrong := filepath.Join(dir, "wrong")
	data, err := os.ReadFile(filepath.Join(libs, "libb.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	data[18], data[19] = 183, 0 // e_machine = EM_AARCH64
	write(t, filepath.Join(wrong, "libb.so.1"), string(data), 0o644)
	junk := filepath.Join(dir, "junk")
	write(t, filepath.Join(junk, "libb.so.1"), strings.Repeat("\x7fELF\x02\x01junk", 10), 0o644)

	missing := func(p *Program) []string {
		var out []string
		for _, m := range p.Missing {
			out = append(out, m.Name+" by "+m.By)
		}
		return out
	}
	pathOf := func(p *Program, name string) string {
		for _, l := range p.Libs {
			if l.Name == name {
				return l.Path
			}
		}
		return ""
	}
	cases := []struct {
		name    string
		prog    string
		extra   []string
		missing []string
		libb    string
	}{
		{"RPATH is inherited by liba", rpath, nil, nil, filepath.Join(libs, "libb.so.1")},
		{"RUNPATH is not inherited", runpath, nil, []string{"libb.so.1 by liba.so.1"}, ""},
		{"LD_LIBRARY_PATH", plain, []string{"LD_LIBRARY_PATH=" + libs}, nil, filepath.Join(libs, "libb.so.1")},
		{"no search path", plain, nil, []string{"liba.so.1 by plain"}, ""},
		{"RUNPATH and LD_LIBRARY_PATH", runpath, []string{"LD_LIBRARY_PATH=" + libs}, nil, filepath.Join(libs, "libb.so.1")},
		{"wrong machine and junk skipped", plain, []string{"LD_LIBRARY_PATH=" + wrong + ":" + junk + ":" + libs}, nil, filepath.Join(libs, "libb.so.1")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := scan(hostSystem, dir, []string{tc.prog}, env("/usr/bin", tc.extra...))
			if err != nil {
				t.Fatal(err)
			}
			p := res.Programs[0]
			if got := missing(p); !reflect.DeepEqual(got, tc.missing) {
				t.Errorf("missing %q, want %q", got, tc.missing)
			}
			if got := pathOf(p, "libb.so.1"); got != tc.libb {
				t.Errorf("libb.so.1 at %q, want %q", got, tc.libb)
			}
		})
	}
}

func TestExpandTokens(t *testing.T) {
	l := &loader{cwd: "/work"}
	obj := &object{class: 2, machine: 62} // ELFCLASS64, EM_X86_64
	lib := libToken(obj)
	cases := []struct{ entry, want string }{
		{"$ORIGIN/../lib", "/opt/app/lib"},
		{"${ORIGIN}/lib", "/opt/app/bin/lib"},
		{"/x/$LIB/y", "/x/" + lib + "/y"},
		{"/z/${PLATFORM}", "/z/x86_64"},
		{"", "/work"},
		{"rel", "/work/rel"},
		{"$UNKNOWN/x", ""},
		{"${ORIGIN", ""},
	}
	for _, tc := range cases {
		got := strings.Join(l.expand(tc.entry, "/opt/app/bin", obj), "")
		if got != tc.want {
			t.Errorf("expand(%q) = %q, want %q", tc.entry, got, tc.want)
		}
	}
}

func TestStaticExecutableAndScript(t *testing.T) {
	needTool(t, "gcc")
	dir := t.TempDir()
	write(t, filepath.Join(dir, "m.c"), "int main(void){return 0;}\n", 0o644)
	st := filepath.Join(dir, "static")
	if out, err := exec.Command("gcc", "-static", "-o", st, filepath.Join(dir, "m.c")).CombinedOutput(); err != nil {
		t.Skipf("gcc -static does not link here (no static libc?): %v\n%s", err, out)
	}
	write(t, filepath.Join(dir, "run.sh"), "#!/bin/bash -e\n./static\n", 0o755)
	write(t, filepath.Join(dir, "data"), "plain text", 0o755)
	res, err := scan(hostSystem, dir, []string{"./static"}, env("/usr/bin"))
	if err != nil {
		t.Fatal(err)
	}
	p := res.Programs[0]
	if p.Kind != KindELF || !p.Static || len(p.Libs) != 0 {
		t.Errorf("static: kind %q static %v libs %d, want elf, true, 0", p.Kind, p.Static, len(p.Libs))
	}
	if w := p.Warnings(); len(w) != 1 || !strings.Contains(w[0], "fully static") {
		t.Errorf("warnings %q", w)
	}
	res, err = scan(hostSystem, dir, []string{"./run.sh", "./data"}, env("/usr/bin"))
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Programs[0]; p.Kind != KindScript || p.Note != "a script (#!/bin/bash -e): cannot see what it runs" {
		t.Errorf("script: %q %q", p.Kind, p.Note)
	}
	res, err = scan(hostSystem, dir, []string{"./data"}, env("/usr/bin"))
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Programs[0]; p.Kind != KindUnreadable || p.Note != "not an ELF program" {
		t.Errorf("data file: %q %q", p.Kind, p.Note)
	}
}

const mpiWrapperSrc = `#include <mpi.h>
int MPI_Send(const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m) { return PMPI_Send(b, c, t, d, g, m); }
int MPI_Barrier(MPI_Comm m) { return PMPI_Barrier(m); }
int main(int argc, char **argv) { MPI_Init(&argc, &argv); MPI_Barrier(MPI_COMM_WORLD); MPI_Finalize(); return 0; }
`

func TestMPIIdentification(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "wrap.c"), mpiWrapperSrc, 0o644)
	write(t, filepath.Join(dir, "plain.c"), "#include <mpi.h>\nint main(int c, char **v){MPI_Init(&c,&v);MPI_Finalize();return 0;}\n", 0o644)
	for _, tc := range []struct {
		mpicc string
		want  MPI
	}{
		{"mpicc.openmpi", OpenMPI},
		{"mpicc.mpich", MPICH},
	} {
		t.Run(tc.mpicc, func(t *testing.T) {
			needTool(t, tc.mpicc)
			wrap := filepath.Join(dir, "wrap-"+tc.mpicc)
			plain := filepath.Join(dir, "plain-"+tc.mpicc)
			run(t, tc.mpicc, "-o", wrap, filepath.Join(dir, "wrap.c"))
			run(t, tc.mpicc, "-o", plain, filepath.Join(dir, "plain.c"))
			res, err := scan(hostSystem, dir, []string{wrap}, env("/usr/bin"))
			if err != nil {
				t.Fatal(err)
			}
			p := res.Programs[0]
			if p.MPI != tc.want || p.StaticMPI != "" {
				t.Fatalf("MPI %q (%s) static %q, want %q", p.MPI, p.MPIHow, p.StaticMPI, tc.want)
			}
			if len(p.MPIChain) != 2 || p.MPIChain[0] != filepath.Base(wrap) {
				t.Errorf("MPI chain %v", p.MPIChain)
			}
			want := []Wrapper{{Object: wrap, Path: wrap, Funcs: []string{"MPI_Barrier", "MPI_Send"}, Count: 2}}
			if !reflect.DeepEqual(p.Wrappers, want) {
				t.Errorf("wrappers %+v, want %+v", p.Wrappers, want)
			}
			if w := p.Warnings(); len(w) != 1 || !strings.Contains(w[0], "defines its own MPI functions (MPI_Barrier, MPI_Send)") {
				t.Errorf("warnings %q", w)
			}
			if m, how := res.MPI(); m != tc.want {
				t.Errorf("job MPI %q (%s), want %q", m, how, tc.want)
			}

			res, err = scan(hostSystem, dir, []string{plain}, env("/usr/bin"))
			if err != nil {
				t.Fatal(err)
			}
			if p := res.Programs[0]; p.MPI != tc.want || len(p.Wrappers) != 0 || len(p.Warnings()) != 0 {
				t.Errorf("plain: MPI %q wrappers %v warnings %q", p.MPI, p.Wrappers, p.Warnings())
			}
		})
	}

	// Launcher and program disagree: the job's MPI is unknown, and says why.
	needTool(t, "mpicc.mpich")
	needTool(t, "mpirun.openmpi")
	plain := filepath.Join(dir, "plain-mismatch")
	run(t, "mpicc.mpich", "-o", plain, filepath.Join(dir, "plain.c"))
	res, err := scan(hostSystem, dir, []string{"mpirun.openmpi", "-np", "2", plain}, env("/usr/bin"))
	if err != nil {
		t.Fatal(err)
	}
	if m, how := res.MPI(); m != UnknownMPI || !strings.Contains(how, "belongs to Open MPI") || !strings.Contains(how, "MPICH") {
		t.Errorf("mismatch: %q %q", m, how)
	}
}

func TestMPILinkedStatically(t *testing.T) {
	needTool(t, "gcc")
	dir := t.TempDir()
	// Fabricated: an executable that defines MPI_Init and PMPI_Init itself,
	// like one with an MPI archive linked in; and one with MPI stubs only.
	write(t, filepath.Join(dir, "static.c"), "int PMPI_Init(int *c, char ***v){return 0;}\nint MPI_Init(int *c, char ***v){return PMPI_Init(c,v);}\nint MPIR_Init_impl(void){return 0;}\nint main(int c, char **v){return MPI_Init(&c,&v)+MPIR_Init_impl();}\n", 0o644)
	write(t, filepath.Join(dir, "stubs.c"), "int MPI_Init(int *c, char ***v){return 0;}\nint main(int c, char **v){return MPI_Init(&c,&v);}\n", 0o644)
	run(t, "gcc", "-o", filepath.Join(dir, "static"), filepath.Join(dir, "static.c"))
	run(t, "gcc", "-o", filepath.Join(dir, "stubs"), filepath.Join(dir, "stubs.c"))
	res, err := scan(hostSystem, dir, []string{"./static"}, env("/usr/bin"))
	if err != nil {
		t.Fatal(err)
	}
	p := res.Programs[0]
	if p.StaticMPI != "./static" || p.MPI != MPICH || len(p.Wrappers) != 0 {
		t.Errorf("fabricated: static MPI %q MPI %q (%s) wrappers %v", p.StaticMPI, p.MPI, p.MPIHow, p.Wrappers)
	}
	if w := p.Warnings(); len(w) != 1 || !strings.HasPrefix(w[0], "MPI is linked statically into ./static:") {
		t.Errorf("warnings %q", w)
	}
	res, err = scan(hostSystem, dir, []string{"./stubs"}, env("/usr/bin"))
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Programs[0]; p.StaticMPI != "" || p.MPIStubs != "./stubs" || p.MPI != NoMPI {
		t.Errorf("stubs: static MPI %q stubs %q MPI %q", p.StaticMPI, p.MPIStubs, p.MPI)
	}

	// The real thing, where the installed MPICH ships its archive.
	const archive = "/usr/lib/x86_64-linux-gnu/libmpich.a"
	if _, err := os.Stat(archive); err != nil {
		t.Skipf("no %s: the real statically linked MPI case is not run", archive)
	}
	write(t, filepath.Join(dir, "mpi.c"), "#include <mpi.h>\nint main(int c, char **v){MPI_Init(&c,&v);MPI_Finalize();return 0;}\n", 0o644)
	app := filepath.Join(dir, "smpi")
	out, err := exec.Command("gcc", "-I/usr/include/x86_64-linux-gnu/mpich", "-o", app, filepath.Join(dir, "mpi.c"), archive, "-lpthread", "-lhwloc", "-lucp", "-lucs").CombinedOutput()
	if err != nil {
		t.Skipf("%s does not link here: %v\n%s", archive, err, out)
	}
	res, err = scan(hostSystem, dir, []string{"mpirun.mpich", "-n", "2", app}, env("/usr/bin"))
	if err != nil {
		t.Fatal(err)
	}
	p = res.Programs[0]
	if p.StaticMPI != app || p.MPI != MPICH || p.MPIChain != nil {
		t.Errorf("libmpich.a: static MPI %q MPI %q (%s) chain %v", p.StaticMPI, p.MPI, p.MPIHow, p.MPIChain)
	}
}

func TestPreloadedTool(t *testing.T) {
	needTool(t, "mpicc.openmpi")
	dir := t.TempDir()
	write(t, filepath.Join(dir, "tool.c"), "#include <mpi.h>\nint MPI_Send(const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m) { return PMPI_Send(b, c, t, d, g, m); }\n", 0o644)
	write(t, filepath.Join(dir, "app.c"), "#include <mpi.h>\nint main(int c, char **v){MPI_Init(&c,&v);MPI_Finalize();return 0;}\n", 0o644)
	run(t, "mpicc.openmpi", "-shared", "-fPIC", "-o", filepath.Join(dir, "libtool.so"), filepath.Join(dir, "tool.c"))
	run(t, "mpicc.openmpi", "-o", filepath.Join(dir, "app"), filepath.Join(dir, "app.c"))
	res, err := scan(hostSystem, dir, []string{"./app"}, env("/usr/bin", "LD_PRELOAD="+filepath.Join(dir, "libtool.so")+":/some/where/libpopmon.so"))
	if err != nil {
		t.Fatal(err)
	}
	p := res.Programs[0]
	want := []Wrapper{{Object: "libtool.so", Path: filepath.Join(dir, "libtool.so"), Funcs: []string{"MPI_Send"}, Count: 1, Preloaded: true}}
	if !reflect.DeepEqual(p.Wrappers, want) || p.MPI != OpenMPI {
		t.Errorf("wrappers %+v MPI %q, want %+v, Open MPI", p.Wrappers, p.MPI, want)
	}
	if len(p.Missing) != 0 {
		t.Errorf("missing %v: libpopmon entries of LD_PRELOAD must be ignored", p.Missing)
	}
}

func TestLauncherMPI(t *testing.T) {
	cases := []struct {
		name  string
		want  MPI
		how   string
		links int
	}{
		{"mpirun.openmpi", OpenMPI, "links libopen-rte", 2},
		{"orterun", OpenMPI, "links libopen-rte", 1},
		{"mpirun.mpich", MPICH, "named mpiexec.hydra", 2},
		{"mpiexec.hydra", MPICH, "named mpiexec.hydra", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := needTool(t, tc.name)
			l, err := LauncherMPI(path)
			if err != nil {
				t.Fatal(err)
			}
			if l.MPI != tc.want || !strings.Contains(l.How, tc.how) || len(l.Links) < tc.links {
				t.Errorf("%s: MPI %q how %q links %v, want %q %q ≥%d links", path, l.MPI, l.How, l.Links, tc.want, tc.how, tc.links)
			}
		})
	}

	dir := t.TempDir()
	write(t, filepath.Join(dir, "mpirun"), "#!/bin/sh\nexec something \"$@\"\n", 0o755)
	if err := os.Symlink("mpirun", filepath.Join(dir, "srun")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop", filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	l, err := LauncherMPI(filepath.Join(dir, "mpirun"))
	if err != nil || l.MPI != UnknownMPI || !strings.Contains(l.How, "a script") {
		t.Errorf("script launcher: %v %q %q", err, l.MPI, l.How)
	}
	l, err = LauncherMPI(filepath.Join(dir, "srun"))
	if err != nil || !l.Slurm || l.MPI != NoMPI {
		t.Errorf("srun: %v %+v", err, l)
	}
	if _, err := LauncherMPI(filepath.Join(dir, "loop")); err == nil || !strings.Contains(err.Error(), "too many symbolic links") {
		t.Errorf("link loop: %v", err)
	}
	if _, err := LauncherMPI(filepath.Join(dir, "absent")); err == nil {
		t.Error("absent launcher: no error")
	}
}
