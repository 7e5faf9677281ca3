package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRecoverRefusesPlantedSession: a session folder is data anyone may
// have written (a shared project folder, an unpacked archive). Its
// popmon-live.info naming a victim folder as live_dir and a victim file as
// output with force must not make recover delete or overwrite either: the
// live folder is refused unless popmon run makes such folders for this
// user, and output and force never come from the file. At a9d5b23 recover
// removed the victim folder and replaced the victim file.
func TestRecoverRefusesPlantedSession(t *testing.T) {
	oldBase := liveBase
	liveBase = t.TempDir()
	defer func() { liveBase = oldBase }()
	root := t.TempDir()
	victimDir := filepath.Join(root, "precious")
	victimFile := filepath.Join(root, "results.json")
	if err := os.Mkdir(victimDir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(victimDir, "data.txt"), []byte("keep me"), 0o600)
	os.WriteFile(victimFile, []byte("keep me too"), 0o600)
	// A real live folder of this user's, to plant as a link and as a
	// look-alike in the wrong place.
	ownRoot := filepath.Join(liveBase, "popmon-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(ownRoot, 0o700); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(ownRoot, "run-link")
	if err := os.Symlink(victimDir, linked); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, liveDir string }{
		{"victim folder", victimDir},
		{"root", "/"},
		{"dotdot", filepath.Join(ownRoot, "run-x", "..", "..", filepath.Base(root), "precious")},
		{"link in the live root", linked},
		{"relative", "precious"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := filepath.Join(root, ".popmon-session-"+strings.ReplaceAll(tc.name, " ", "_"))
			if err := os.Mkdir(session, 0o700); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(map[string]any{"live_dir": tc.liveDir, "command": []string{"./app"}, "output": victimFile, "force": true})
			os.WriteFile(filepath.Join(session, liveInfoName), b, 0o600)
			code, stdout, stderr := runCLI("recover", "--format", "none", session)
			if code != ExitInput || !strings.Contains(stderr, "refusing its live folder") || !strings.Contains(stderr, "nothing was read or removed") {
				t.Errorf("recover: exit %d, want %d and a refusal\n%s%s", code, ExitInput, stdout, stderr)
			}
			if b, err := os.ReadFile(filepath.Join(victimDir, "data.txt")); err != nil || string(b) != "keep me" {
				t.Errorf("the victim folder was touched: %v %q", err, b)
			}
			if b, err := os.ReadFile(victimFile); err != nil || string(b) != "keep me too" {
				t.Errorf("the victim file was touched: %v %q", err, b)
			}
			if _, err := os.Stat(session); err != nil {
				t.Errorf("the refused session folder was removed: %v", err)
			}
		})
	}
}

// TestCheckLiveDir: the live folders popmon run makes are accepted.
func TestCheckLiveDir(t *testing.T) {
	oldBase := liveBase
	liveBase = t.TempDir()
	defer func() { liveBase = oldBase }()
	session := t.TempDir()
	d, err := makeLiveDir(session)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkLiveDir(session, d); err != nil {
		t.Errorf("makeLiveDir's %s refused: %v", d, err)
	}
	in := filepath.Join(session, "live")
	os.Mkdir(in, 0o700)
	if err := checkLiveDir(session, in); err != nil {
		t.Errorf("the session's own live folder %s refused: %v", in, err)
	}
	other := t.TempDir()
	if err := checkLiveDir(session, filepath.Join(other, "live")); err == nil {
		t.Errorf("another folder's live folder accepted")
	}
}
