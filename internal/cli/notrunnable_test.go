package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNotRunnableExitCodes: a command that exists but cannot be executed (a
// folder, a file without execute permission) ends popmon run and exec with
// 126, one that does not exist with 127, as a POSIX shell says (at
// a9d5b23 both gave 127).
func TestNotRunnableExitCodes(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "script.sh")
	if err := os.WriteFile(noexec, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		command string
		want    int
	}{
		{"folder", dir, 126},
		{"not executable", noexec, 126},
		{"missing file", filepath.Join(dir, "missing"), 127},
		{"not on PATH", "popmon-no-such-command", 127},
	} {
		for _, verb := range []string{"run", "exec"} {
			t.Run(verb+"/"+tc.name, func(t *testing.T) {
				code, _, stderr := runCLI(verb, "--", tc.command)
				if code != tc.want {
					t.Errorf("popmon %s -- %s: exit %d, want %d\n%s", verb, tc.command, code, tc.want, stderr)
				}
			})
		}
	}
}
