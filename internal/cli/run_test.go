package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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

func TestPublishNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "run.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "new")
	if err := os.WriteFile(src, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := publish(src, target)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "run.1.json"); got != want {
		t.Errorf("published to %s, want %s", got, want)
	}
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Errorf("existing file changed to %q", b)
	}
	if b, _ := os.ReadFile(got); string(b) != "new" {
		t.Errorf("new file holds %q", b)
	}
	if _, err := os.Stat(src); !os.IsNotExist(err) {
		t.Errorf("source still exists: %v", err)
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
	got, err := collect(dir, 10)
	if err != nil || len(got) != 1 || got[0].pid != 10 {
		t.Fatalf("child's file not chosen: %+v %v", got, err)
	}
	got, _ = collect(dir, 99)
	if len(got) != 1 || got[0].pid != 11 {
		t.Fatalf("longest file not chosen: %+v", got)
	}
	write("mpi-h-12.json", single(12, 1))
	got, _ = collect(dir, 10)
	if len(got) != 1 || got[0].pid != 12 || !got[0].mpi {
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
