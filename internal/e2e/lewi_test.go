package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 34 (the foundation): DLB's LeWI calls through the real library, a
// program built against a `popmon dlb-home` prefix as a DLB user builds it
// (examples/dlbhome/dlb_lewi.c, two processes on one node registry): with
// DLB_ARGS=--lewi they get DLB's codes for lend, borrow, reclaim (noted while
// the borrower is there), return, reclaim with nothing lent, LendCpus (not in
// DLB's mask policy), finalize, and a call after it; without --lewi every
// LeWI call is DLB_ERR_NOLEWI, as before.
func TestLewiDLBCalls(t *testing.T) {
	impl := impls(t)[0]
	home := dlbHome(t, impl)
	bin := buildAgainst(t, home, "cc", "dlb_lewi.c")
	for _, c := range []struct{ name, args, want string }{
		{"lewi", "--lewi", "ok lewi 0 0 0 0 0 1 0 2 -15 0 0 -2"},
		{"off", "--talp=none", "ok lewi 0 0 -17 -17 -17 -17 -17 -17 -17 0 0 -17"},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := fmt.Sprintf("e2e-%d-%d", os.Getpid(), time.Now().UnixNano())
			defer os.Remove(filepath.Join("/dev/shm", fmt.Sprintf("popmon-lewi-%d-%s", os.Geteuid(), key)))
			so, se, code := runCommand(t, time.Minute, []string{"DLB_ARGS=" + c.args, "POPMON_LEWI_KEY=" + key}, bin)
			if code != 0 || strings.TrimSpace(so) != c.want {
				t.Fatalf("DLB_ARGS=%s: exit %d, stdout %q, want %q\nstderr:\n%s", c.args, code, so, c.want, se)
			}
		})
	}
}
