package doctor

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/session"
)

func TestHumanBytes(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {36 << 10, "36.0 KiB"}, {3 << 29, "1.5 GiB"}, {5 << 40, "5.0 TiB"}} {
		if got := humanBytes(tc.n); got != tc.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// TestLiveCheck: doctor says where the live files go and when that place
// does not suit them.
func TestLiveCheck(t *testing.T) {
	old := session.LiveBase
	defer func() { session.LiveBase = old }()
	session.LiveBase = filepath.Join(t.TempDir(), "missing")
	c := liveCheck()
	if !c.warn || !strings.Contains(c.detail, "is missing") || !strings.Contains(c.detail, "session folder") {
		t.Errorf("missing folder: %+v", c)
	}
	session.LiveBase = "/dev/shm"
	kind, free, err := session.FSInfo(session.LiveBase)
	if err != nil || kind != "tmpfs" {
		t.Skipf("/dev/shm is not tmpfs here (%q, %v)", kind, err)
	}
	c = liveCheck()
	if free < 64<<20 {
		if !c.warn || !strings.Contains(c.detail, "free: each measured process needs") {
			t.Errorf("small tmpfs (%d bytes free): %+v", free, c)
		}
	} else if c.warn || !strings.Contains(c.detail, "/dev/shm (tmpfs, ") {
		t.Errorf("tmpfs: %+v", c)
	}
}
