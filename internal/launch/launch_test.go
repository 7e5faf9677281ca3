package launch

import (
	"strings"
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

func TestGitEnv(t *testing.T) {
	env := map[string]string{"GITHUB_SHA": "abc", "GITHUB_REF_NAME": "main", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_HEAD_REF": "feat"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		name  string
		flags Options
		env   func(string) string
		want  map[string]string
	}{
		{"none", Options{}, func(string) string { return "" }, nil},
		{"github", Options{}, getenv, map[string]string{"POPMON_GIT_COMMIT": "abc", "POPMON_GIT_BRANCH": "feat", "POPMON_GIT_MERGE_REQUEST": "1"}},
		{"flags win", Options{GitCommit: "f00", GitBranch: "x"}, getenv, map[string]string{"POPMON_GIT_COMMIT": "f00", "POPMON_GIT_BRANCH": "x"}},
		{"branch override", Options{GitBranch: "y"}, getenv, map[string]string{"POPMON_GIT_COMMIT": "abc", "POPMON_GIT_BRANCH": "y", "POPMON_GIT_MERGE_REQUEST": "1"}},
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
		argv, got := OpenMPIExportArgs(tt.argv, tt.scan, env, tt.userList)
		if a := strings.Join(argv, " "); a != tt.wantArgv {
			t.Errorf("%s: argv %q, want %q", tt.name, a, tt.wantArgv)
		}
		if e := strings.Join(got, " "); e != tt.wantEnv {
			t.Errorf("%s: environment %q, want %q", tt.name, e, tt.wantEnv)
		}
	}
}

func TestCountersMode(t *testing.T) {
	tests := []struct {
		mode    string
		env     string // POPMON_COUNTERS set, "" none
		wantErr bool
	}{
		{"", "", false},
		{"auto", "auto", false},
		{"on", "on", false},
		{"off", "off", false},
		{"yes", "", true},
	}
	for _, tt := range tests {
		set := map[string]string{}
		err := countersEnv(tt.mode, set)
		if (err != nil) != tt.wantErr {
			t.Errorf("countersEnv(%q) error %v, want error %v", tt.mode, err, tt.wantErr)
		}
		if err != nil && exitCode(err) != ExitUsage {
			t.Errorf("countersEnv(%q): %v is not a usage error", tt.mode, err)
		}
		if set["POPMON_COUNTERS"] != tt.env {
			t.Errorf("countersEnv(%q) sets POPMON_COUNTERS=%q, want %q", tt.mode, set["POPMON_COUNTERS"], tt.env)
		}
	}
}

func TestGPUEnv(t *testing.T) {
	const lib = "/cache/libpopmon.so"
	tests := []struct {
		name      string
		mode      string
		env       map[string]string
		wantInj   string // "" = not set by popmon
		wantMode  string
		wantUsage bool
	}{
		{name: "default auto", wantInj: lib},
		{name: "flag on", mode: "on", wantInj: lib, wantMode: "on"},
		{name: "flag off", mode: "off", wantMode: "off"},
		{name: "env off", env: map[string]string{"POPMON_GPU": "off"}},
		{name: "flag auto over env off", mode: "auto", env: map[string]string{"POPMON_GPU": "off"}, wantInj: lib, wantMode: "auto"},
		{name: "another tool", env: map[string]string{"CUDA_INJECTION64_PATH": "/opt/nsys/libToolsInjection64.so"}},
		{name: "another tool, on", mode: "on", env: map[string]string{"CUDA_INJECTION64_PATH": "/opt/nsys/libToolsInjection64.so"},
			wantMode: "on"},
		{name: "an older popmon library", env: map[string]string{"CUDA_INJECTION64_PATH": "/old/libpopmon.so"}, wantInj: lib},
		{name: "bad mode", mode: "always", wantUsage: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := map[string]string{}
			err := gpuEnv(tc.mode, lib, set, func(k string) string { return tc.env[k] })
			if tc.wantUsage {
				if exitCode(err) != ExitUsage {
					t.Fatalf("err = %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := set["CUDA_INJECTION64_PATH"]; got != tc.wantInj {
				t.Errorf("CUDA_INJECTION64_PATH = %q, want %q", got, tc.wantInj)
			}
			wantACC := lib
			if tc.mode == "off" || tc.env["POPMON_GPU"] == "off" && tc.mode == "" {
				wantACC = ""
			}
			if got := set["ACC_PROFLIB"]; got != wantACC {
				t.Errorf("ACC_PROFLIB = %q, want %q", got, wantACC)
			}
			if got := set["POPMON_GPU"]; got != tc.wantMode {
				t.Errorf("POPMON_GPU = %q, want %q", got, tc.wantMode)
			}
		})
	}
}
