package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/popmon/popmon/internal/binscan"
)

func TestMeasuredEnv(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		want    []string
		absent  []string
	}{
		{"fresh", []string{"HOME=/h"}, []string{"HOME=/h", "LD_PRELOAD=/lib.so", "POPMON_SESSION=/s"}, nil},
		{"existing preload kept after", []string{"LD_PRELOAD=/other.so"}, []string{"LD_PRELOAD=/lib.so:/other.so"}, nil},
		{"already preloaded", []string{"LD_PRELOAD=/lib.so"}, []string{"LD_PRELOAD=/lib.so"}, nil},
		{"moved first", []string{"LD_PRELOAD=/tool.so /lib.so:/b.so"}, []string{"LD_PRELOAD=/lib.so:/tool.so:/b.so"}, nil},
		{"drops stale keys", []string{"POPMON_OUTPUT=x", "POPMON_SESSION=old"}, []string{"POPMON_SESSION=/s"}, []string{"POPMON_OUTPUT=x", "POPMON_SESSION=old"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := measuredEnv(tc.environ, "/lib.so", map[string]string{"POPMON_SESSION": "/s"}, []string{"POPMON_OUTPUT"})
			joined := "\n" + strings.Join(got, "\n") + "\n"
			for _, w := range tc.want {
				if !strings.Contains(joined, "\n"+w+"\n") {
					t.Errorf("env %v lacks %s", got, w)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(joined, "\n"+a+"\n") {
					t.Errorf("env %v still has %s", got, a)
				}
			}
		})
	}
}

func TestCollectPrefersMPIThenChild(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	single := func(pid, elapsed int) string {
		return `{"command":["x"],"processes":[{"pid":` + strconv.Itoa(pid) + `}],"regions":[{"processes":[{"elapsed_ns":` + strconv.Itoa(elapsed) + `}]}]}`
	}
	write("proc-h-10.json", single(10, 5))
	write("proc-h-11.json", single(11, 50))
	res, err := readSession(dir, 10)
	if got := res.files; err != nil || len(got) != 1 || got[0].pid != 10 {
		t.Fatalf("child's file not chosen: %+v %v", got, err)
	}
	res, _ = readSession(dir, 99)
	if got := res.files; len(got) != 1 || got[0].pid != 11 {
		t.Fatalf("longest file not chosen: %+v", got)
	}
	write("mpi-h-12.json", single(12, 1))
	res, _ = readSession(dir, 10)
	if got := res.files; len(got) != 1 || got[0].pid != 12 || !got[0].mpi {
		t.Fatalf("MPI file not preferred: %+v", got)
	}
}

func TestDefaultOutputName(t *testing.T) {
	got := defaultOutputName([]string{"/path/to/my app"})
	if !strings.HasPrefix(got, "popmon-my_app-") || !strings.HasSuffix(got, ".json") {
		t.Errorf("defaultOutputName = %q", got)
	}
}

func TestGitEnv(t *testing.T) {
	env := map[string]string{"GITHUB_SHA": "abc", "GITHUB_REF_NAME": "main", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_HEAD_REF": "feat"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		name  string
		flags measureFlags
		env   func(string) string
		want  map[string]string
	}{
		{"none", measureFlags{}, func(string) string { return "" }, nil},
		{"github", measureFlags{}, getenv, map[string]string{"POPMON_GIT_COMMIT": "abc", "POPMON_GIT_BRANCH": "feat", "POPMON_GIT_MERGE_REQUEST": "1"}},
		{"flags win", measureFlags{gitCommit: "f00", gitBranch: "x"}, getenv, map[string]string{"POPMON_GIT_COMMIT": "f00", "POPMON_GIT_BRANCH": "x"}},
		{"branch override", measureFlags{gitBranch: "y"}, getenv, map[string]string{"POPMON_GIT_COMMIT": "abc", "POPMON_GIT_BRANCH": "y", "POPMON_GIT_MERGE_REQUEST": "1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.flags.gitEnv(tc.env)
			if len(got) != len(tc.want) {
				t.Fatalf("gitEnv = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestSessionExplainsUnmeasured(t *testing.T) {
	dir := t.TempDir()
	for r := 1; r <= 3; r++ {
		body := "rank " + strconv.Itoa(r) + "\nrank 0 did not take part in popmon's finalize: no measurement written\n"
		if err := os.WriteFile(filepath.Join(dir, "unmeasured-h-"+strconv.Itoa(100+r)+".txt"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "unmeasured-h-9.txt"), []byte("garbage"), 0o600)
	res, err := readSession(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(res.explain("mpirun", nil, 0), "\n")
	want := "rank 0 did not take part in popmon's finalize: no measurement written (ranks 1-3)\nno measurement was written"
	if got != want {
		t.Errorf("explain:\n%s\nwant:\n%s", got, want)
	}
	empty, _ := readSession(t.TempDir(), 1)
	if got := strings.Join(empty.explain("job.sh", nil, 0), "\n"); !strings.Contains(got, "job.sh ran no program popmon could measure") ||
		!strings.Contains(got, "LD_PRELOAD") {
		t.Errorf("explain without notes: %s", got)
	}
	if got := strings.Join(empty.explain("mpirun", nil, syscall.SIGTERM), "\n"); got != "no measurement was written: mpirun was killed by SIGTERM before its processes finished (the library writes the measurement at MPI_Finalize, or at exit without MPI)" {
		t.Errorf("explain of a killed job: %s", got)
	}
}

func TestRankList(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		want string
	}{{[]int{3}, "rank 3"}, {[]int{3, 1, 2, 7}, "ranks 1-3, 7"}, {[]int{0, 2}, "ranks 0, 2"}} {
		if got := rankList(tt.in); got != tt.want {
			t.Errorf("rankList(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestForwardOpenMPI(t *testing.T) {
	set := map[string]string{"POPMON_SESSION": "/s", "POPMON_OPENMP_MODE": "auto"}
	forwardOpenMPI("", set)
	if got := set["OMPI_MCA_mca_base_env_list"]; got != "LD_PRELOAD;POPMON_OPENMP_MODE;POPMON_SESSION" {
		t.Errorf("env list %q", got)
	}
	set = map[string]string{"POPMON_SESSION": "/s"}
	forwardOpenMPI("FOO=1;LD_PRELOAD;BAR", set)
	if got := set["OMPI_MCA_mca_base_env_list"]; got != "FOO=1;LD_PRELOAD;BAR;POPMON_SESSION" {
		t.Errorf("env list with the user's %q", got)
	}
}

func TestOpenMPIExportArgs(t *testing.T) {
	ompi := &binscan.Result{Launchers: []*binscan.Launcher{{Arg: "mpirun", MPI: binscan.OpenMPI}}}
	mpich := &binscan.Result{Launchers: []*binscan.Launcher{{Arg: "mpirun", MPI: binscan.MPICH}}}
	env := []string{"A=1", "OMPI_MCA_mca_base_env_list=LD_PRELOAD;POPMON_SESSION"}
	for _, tt := range []struct {
		name     string
		argv     []string
		scan     *binscan.Result
		userList string
		wantArgv string
		wantEnv  string
	}{
		{"-x moves the list to the command line", []string{"time", "mpirun", "-np", "2", "-x", "OMP_NUM_THREADS", "./app"}, ompi, "",
			"time mpirun -x LD_PRELOAD -x POPMON_SESSION -np 2 -x OMP_NUM_THREADS ./app", "A=1"},
		{"no -x keeps the list", []string{"mpirun", "-np", "2", "./app"}, ompi, "",
			"mpirun -np 2 ./app", strings.Join(env, " ")},
		{"MPICH's launcher is left alone", []string{"mpirun", "-x", "./app"}, mpich, "",
			"mpirun -x ./app", strings.Join(env, " ")},
		{"the user's own list is kept", []string{"mpirun", "-x", "B", "./app"}, ompi, "B",
			"mpirun -x B ./app", strings.Join(env, " ")},
		{"no scan", []string{"mpirun", "-x", "B", "./app"}, nil, "",
			"mpirun -x B ./app", strings.Join(env, " ")},
	} {
		argv, got := openMPIExportArgs(tt.argv, tt.scan, env, tt.userList)
		if a := strings.Join(argv, " "); a != tt.wantArgv {
			t.Errorf("%s: argv %q, want %q", tt.name, a, tt.wantArgv)
		}
		if e := strings.Join(got, " "); e != tt.wantEnv {
			t.Errorf("%s: environment %q, want %q", tt.name, e, tt.wantEnv)
		}
	}
}
