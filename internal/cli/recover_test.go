package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/session"

	"github.com/popmon/popmon/internal/outfile"
)

// plantSession makes a session folder in dir whose popmon-live.info names
// liveDir as its live folder and output with force, and holds a
// measurement (withFile), as a finished job leaves one: recover then goes
// as far as writing and removing.
func plantSession(t *testing.T, dir, name, liveDir, output string, withFile bool) string {
	t.Helper()
	folder := filepath.Join(dir, ".popmon-session-"+name)
	if err := os.Mkdir(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"live_dir": liveDir, "command": []string{"./app"}, "output": output, "force": true})
	if err := os.WriteFile(filepath.Join(folder, session.InfoName), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if withFile {
		os.WriteFile(filepath.Join(folder, "mpi-1.json"), []byte(`{"command": ["./app"], "planted": true}`), 0o600)
	}
	return folder
}

// TestRecoverRefusesPlantedSession: a session folder is data anyone may
// have written (a shared project folder, an unpacked archive). Its
// popmon-live.info naming a victim folder as live_dir and a victim file as
// output with force must not make recover delete or overwrite either: the
// live folder is refused unless popmon run makes such folders for this
// user, and output and force never come from the file. At a9d5b23 recover
// replaced the victim file with the planted measurement and removed the
// victim folder.
func TestRecoverRefusesPlantedSession(t *testing.T) {
	oldBase := session.LiveBase
	session.LiveBase = t.TempDir()
	defer func() { session.LiveBase = oldBase }()
	root := t.TempDir()
	victimDir := filepath.Join(root, "precious")
	victimFile := filepath.Join(root, "results.json")
	// A live root of this user's, to plant a link to the victim in.
	ownRoot := filepath.Join(session.LiveBase, "popmon-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(ownRoot, 0o700); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(ownRoot, "run-link")
	if err := os.Symlink(victimDir, linked); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, liveDir string
		withFile      bool
	}{
		{"victim folder", victimDir, true},
		{"dotdot", filepath.Join(ownRoot, "run-x", "..", "..", "..", filepath.Base(root), "precious"), true},
		{"link in the live root", linked, true},
		{"relative", "precious", true},
		{"named like a live folder", filepath.Join(root, "live"), true},
		// Without a measurement: a9d5b23 would have stopped before
		// removing (no live files in /), so this case cannot remove
		// everything when run on old code as root.
		{"root", "/", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.MkdirAll(victimDir, 0o700); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(victimDir, "data.txt"), []byte("keep me"), 0o600)
			os.WriteFile(victimFile, []byte("keep me too"), 0o600)
			os.MkdirAll(filepath.Join(root, "live"), 0o700)
			folder := plantSession(t, root, strings.ReplaceAll(tc.name, " ", "_"), tc.liveDir, victimFile, tc.withFile)
			code, stdout, stderr := runCLI("recover", "--format", "none", folder)
			if code != ExitInput || !strings.Contains(stderr, "refusing its live folder") || !strings.Contains(stderr, "nothing was read or removed") {
				t.Errorf("recover: exit %d, want %d and a refusal\n%s%s", code, ExitInput, stdout, stderr)
			}
			if b, err := os.ReadFile(filepath.Join(victimDir, "data.txt")); err != nil || string(b) != "keep me" {
				t.Errorf("the victim folder was touched: %v %q", err, b)
			}
			if b, err := os.ReadFile(victimFile); err != nil || string(b) != "keep me too" {
				t.Errorf("the victim file was touched: %v %q", err, b)
			}
			if _, err := os.Stat(folder); err != nil {
				t.Errorf("the refused session folder was removed: %v", err)
			}
		})
	}
}

// TestRecoverOutputNotFromFile: a session folder whose live folder is
// acceptable (its own live) still does not choose where recover writes nor
// whether it replaces: its output names only the file's base name, written
// next to the session folder and numbered when taken; -o and --force on
// the command line are honoured. At a9d5b23 the planted output with force
// replaced the victim file.
func TestRecoverOutputNotFromFile(t *testing.T) {
	oldBase := session.LiveBase
	session.LiveBase = t.TempDir()
	defer func() { session.LiveBase = oldBase }()
	root, elsewhere := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		name, output string
		args         []string
		want         string // the file written, relative to root
	}{
		{"victim next to the session", filepath.Join(root, "results.json"), nil, "results.1.json"},
		{"victim elsewhere", filepath.Join(elsewhere, "results.json"), nil, "results.1.json"},
		{"dotdot", "../../../../../../etc/..", nil, ""},
		{"-o and --force from the command line", filepath.Join(elsewhere, "results.json"), []string{"-o", filepath.Join(root, "mine.json"), "--force"}, "mine.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			victims := []string{filepath.Join(root, "results.json"), filepath.Join(elsewhere, "results.json"), filepath.Join(root, "mine.json")}
			for _, v := range victims {
				os.WriteFile(v, []byte("keep me"), 0o600)
			}
			folder := plantSession(t, root, strings.ReplaceAll(tc.name, " ", "_"), "", tc.output, true)
			live := filepath.Join(folder, "live")
			os.Mkdir(live, 0o700)
			b, _ := json.Marshal(map[string]any{"live_dir": live, "command": []string{"./app"}, "output": tc.output, "force": true})
			os.WriteFile(filepath.Join(folder, session.InfoName), b, 0o600)
			args := append(append([]string{"recover", "--format", "none"}, tc.args...), folder)
			code, stdout, stderr := runCLI(args...)
			if code != 0 {
				t.Fatalf("recover: exit %d\n%s%s", code, stdout, stderr)
			}
			want := tc.want
			if want == "" {
				want = outfile.DefaultName([]string{"./app"})
			}
			got := filepath.Join(root, want)
			if b, err := os.ReadFile(got); err != nil || !strings.Contains(string(b), "planted") {
				t.Errorf("%s: %v %q, want the measurement\n%s", got, err, b, stderr)
			}
			for _, v := range victims {
				if v == got {
					continue
				}
				if b, err := os.ReadFile(v); err != nil || string(b) != "keep me" {
					t.Errorf("%s was touched: %v %q", v, err, b)
				}
			}
			if _, err := os.Stat(folder); err == nil {
				t.Errorf("the session folder %s was left", folder)
			}
			os.Remove(got)
		})
	}
}
