package cli

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/popmon/popmon/internal/live"

	"github.com/popmon/popmon/internal/session"
)

// TestLiveOutputStart: the address file, and the one-line warning for an
// address others can reach.
func TestLiveOutputStart(t *testing.T) {
	for _, c := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:0", false}, {"0.0.0.0:0", true}} {
		dir := t.TempDir()
		o := liveOutput{addr: c.addr, addrFile: filepath.Join(dir, "addr"), window: time.Minute}
		var stderr bytes.Buffer
		svc, err := o.start(&Env{Stderr: &stderr}, func() []*live.Snapshot { return nil }, time.Second, session.Info{LiveDir: "/dev/shm/popmon-0/run-1"})
		if err != nil {
			t.Fatal(err)
		}
		svc.Close()
		b, _ := os.ReadFile(o.addrFile)
		_, port, err := net.SplitHostPort(strings.TrimSpace(string(b)))
		if n, _ := strconv.Atoi(port); err != nil || n == 0 {
			t.Errorf("%s: address file %q", c.addr, b)
		}
		warned := strings.Contains(stderr.String(), "whoever reaches this address")
		if warned != c.warn || strings.Count(stderr.String(), "\n") > 1 {
			t.Errorf("%s: stderr %q, want a warning: %v (one line)", c.addr, stderr.String(), c.warn)
		}
	}
}

// TestLiveOutputCheck: options refused before the job starts.
func TestLiveOutputCheck(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	for _, c := range []struct {
		o    liveOutput
		says string
	}{
		{liveOutput{window: time.Minute, textfile: file}, "not a folder"},
		{liveOutput{window: time.Minute, textfile: filepath.Join(file, "x")}, "not a folder"},
		{liveOutput{window: 0}, "between 1s and 10m"},
		{liveOutput{window: time.Hour}, "between 1s and 10m"},
		{liveOutput{window: time.Minute, addrFile: file}, "needs --serve"},
		{liveOutput{window: time.Minute, addr: "127.0.0.1:0", textfile: filepath.Dir(file)}, ""},
	} {
		err := c.o.check()
		if (c.says == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.says)
		}
	}
}
