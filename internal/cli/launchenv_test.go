package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnsupervisedNote: the per-rank form's line about killed jobs comes
// from the launcher's rank 0 only, and never under popmon run.
func TestUnsupervisedNote(t *testing.T) {
	for _, c := range []struct {
		name string
		rank int
		env  map[string]string
		want string // a word of the line, "" for no line
	}{
		{"rank 0 of mpirun", 0, nil, "popmon run -- mpirun ..."},
		{"rank 0 of srun", 0, map[string]string{"SLURM_STEP_ID": "0"}, "popmon run -- srun ..."},
		{"rank 1", 1, nil, ""},
		{"no launcher", -1, nil, ""},
		{"under popmon run", 0, map[string]string{"POPMON_SESSION": "/tmp/s"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := unsupervisedNote(c.rank, func(k string) string { return c.env[k] })
			if c.want == "" && got != "" || c.want != "" && (!strings.HasPrefix(got, "popmon: ") || !strings.Contains(got, c.want) || strings.Contains(got, "\n")) {
				t.Errorf("%q, want one line with %q", got, c.want)
			}
		})
	}
}

// TestLookCommand: a command is found through PATH as a shell finds it, a
// relative folder on PATH included (Go's LookPath refuses it: ErrDot).
func TestLookCommand(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	t.Setenv("PATH", ".:/usr/bin:/bin")
	if got, err := lookCommand("app"); err != nil || got != "./app" {
		t.Errorf("app through PATH's '.': %q, %v; want ./app", got, err)
	}
	if got, err := lookCommand("sh"); err != nil || !filepath.IsAbs(got) {
		t.Errorf("sh: %q, %v", got, err)
	}
	if _, err := lookCommand("no-such-program-here"); err == nil {
		t.Error("a missing program was found")
	}
}
