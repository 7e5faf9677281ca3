package drom

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

func TestParseMask(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		bad      bool
	}{
		{in: "0", want: "0"},
		{in: "0,1", want: "0-1"},
		{in: "0,5-7", want: "0,5-7"},
		{in: "3,1,2", want: "1-3"},
		{in: "0xE1", want: "0,5-7"},
		{in: "0b11100001", want: "0,5-7"},
		{in: "0x0", want: ""},
		{in: "1023", want: "1023"},
		{in: "1024", bad: true},
		{in: "", bad: true},
		{in: "a", bad: true},
		{in: "3-1", bad: true},
		{in: "0,", bad: true},
		{in: "-1", bad: true},
		{in: "0b12", bad: true},
		{in: "0xg", bad: true},
	} {
		m, err := ParseMask(tt.in)
		if (err != nil) != tt.bad {
			t.Errorf("ParseMask(%q) error %v, want error %v", tt.in, err, tt.bad)
			continue
		}
		if !tt.bad && m.String() != tt.want {
			t.Errorf("ParseMask(%q) = %q, want %q", tt.in, m.String(), tt.want)
		}
	}
}

func TestName(t *testing.T) {
	uid := os.Geteuid()
	for key, want := range map[string]string{"": "default", "job 1/x": "job_1_x", "a.b-c_d": "a.b-c_d"} {
		if got := Name(key); !strings.HasSuffix(got, "-"+want) || !strings.HasPrefix(got, "/dev/shm/popmon-drom-") || !strings.Contains(got, "-"+strconv.Itoa(uid)+"-") {
			t.Errorf("Name(%q) = %q, want .../popmon-drom-%d-%s", key, got, uid, want)
		}
	}
}

// TestOpenRefuses: an object open to others, of another size, a link or a
// folder is refused; a missing one is ErrNoRegistry without create.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r")
	if _, err := Open(p, false); err == nil || !strings.Contains(err.Error(), "no DROM registry") {
		t.Errorf("missing: %v", err)
	}
	for _, tt := range []struct {
		name, want string
		make       func(string) error
	}{
		{"open", "open to other users", func(p string) error {
			if err := os.WriteFile(p, make([]byte, Size), 0o600); err != nil {
				return err
			}
			return os.Chmod(p, 0o660)
		}},
		{"size", "another layout", func(p string) error { return os.WriteFile(p, make([]byte, 100), 0o600) }},
		{"link", "cannot open", func(p string) error { return os.Symlink(filepath.Join(dir, "elsewhere"), p) }},
		{"dir", "cannot open", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"owner", "belongs to another user", func(p string) error {
			if err := os.WriteFile(p, make([]byte, Size), 0o600); err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		}},
		{"magic", "another layout", func(p string) error {
			b := make([]byte, Size)
			b[0] = 1
			return os.WriteFile(p, b, 0o600)
		}},
	} {
		if tt.name == "owner" && os.Geteuid() != 0 {
			continue // only root can give a file to another user
		}
		p := filepath.Join(dir, tt.name)
		if err := tt.make(p); err != nil {
			t.Fatal(err)
		}
		r, err := Open(p, true)
		if err == nil {
			r.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
}

// sleeper is a live process the test owns (killed at the end).
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "60")
	if err := c.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

func mask(cs ...int) Mask {
	var m Mask
	for _, c := range cs {
		m.Set(c)
	}
	return m
}

func open(t *testing.T) *Registry {
	t.Helper()
	r, err := Open(filepath.Join(t.TempDir(), "reg"), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// adopt plays the process's side: its current mask becomes its future
// one (what the library does at a parallel region).
func adopt(r *Registry, pid int) {
	s := r.Find(pid)
	_, fut, _ := r.masks(s)
	for i := range fut {
		atomic.StoreUint64(r.slot(s, offCur+8*i), fut[i])
	}
}

// TestSequence: DLB's codes through register, steal, pending changes,
// death and PostFinalize.
func TestSequence(t *testing.T) {
	r := open(t)
	a, b := sleeper(t).Process.Pid, sleeper(t).Process.Pid
	step := func(what string, got, want Code) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	step("A on 0-1", r.PreInit(a, mask(0, 1), 0), Success)
	step("A again", r.PreInit(a, mask(0, 1), 0), ErrInit)
	step("B on 1 without stealing", r.PreInit(b, mask(1), 0), Perm)
	step("B on 2", r.PreInit(b, mask(2), 0), Success)
	step("nobody", r.SetMask(1<<30, mask(0), 0), NoProc)
	step("B takes 1 from A", r.SetMask(b, mask(1, 2), 0), Success)
	ps := r.Procs()
	if len(ps) != 2 || ps[0].PID != a || !ps[0].Dirty || ps[0].Future != mask(0) || ps[0].Current != mask(0, 1) || ps[0].Stolen != mask(1) {
		t.Fatalf("after the steal: %+v", ps)
	}
	step("B again while pending", r.SetMask(b, mask(2), 0), PDirty)
	step("A, whose change is pending", r.SetMask(a, mask(0), 0), PDirty)
	adopt(r, b)
	step("B takes 0 from A, whose change is pending", r.SetMask(b, mask(0, 1, 2), 0), Perm)
	adopt(r, a)
	step("B gives 2 up", r.SetMask(b, mask(1), 0), Success)
	if p := r.Procs()[1]; p.Future != mask(1) || p.Current != mask(1, 2) {
		t.Errorf("B: %+v", p)
	}
	step("PostFinalize B, returning stolen", r.PostFinalize(b, true), Success)
	if p := r.Procs(); len(p) != 1 || p[0].Future != mask(0, 1) || p[0].Stolen != (Mask{}) {
		t.Errorf("A after B's end with return-stolen: %+v", p)
	}
	step("PostFinalize B again", r.PostFinalize(b, false), NoProc)
}

// TestDeadCleaned: a dead process's slot and CPUs are freed by the next
// toucher; a reused pid (another start time) is dead too.
func TestDeadCleaned(t *testing.T) {
	r := open(t)
	c := exec.Command("sleep", "60")
	if err := c.Start(); err != nil {
		t.Skip(err)
	}
	pid := c.Process.Pid
	if got := r.PreInit(pid, mask(0, 1), 0); got != Success {
		t.Fatal(got)
	}
	c.Process.Signal(syscall.SIGKILL)
	c.Wait()
	if ps := r.Procs(); len(ps) != 0 {
		t.Errorf("after SIGKILL: %+v", ps)
	}
	live := sleeper(t).Process.Pid
	if got := r.PreInit(live, mask(0, 1), 0); got != Success {
		t.Errorf("its CPUs after the sweep: %v", got)
	}
	s := r.Find(live)
	*r.slot(s, offStart) = StartTime(live) + 1 // the pid reused by another
	if ps := r.Procs(); len(ps) != 0 {
		t.Errorf("a slot whose start time differs: %+v", ps)
	}
	if Alive(live, StartTime(live)+1) || !Alive(live, StartTime(live)) || !Alive(live, 0) || Alive(0, 0) {
		t.Error("Alive")
	}
}

// TestLayoutMatchesC: the offsets and sizes here are shim/drom_shm.h's.
func TestLayoutMatchesC(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "l.c")
	os.WriteFile(src, []byte(`#include <stdio.h>
#include "drom_shm.h"
int main(void) {
	printf("%d %d %d %d %d %d %llx %u %u %d %d\n", POPMON_DROM_MAX_CPUS, POPMON_DROM_MAX_SLOTS, POPMON_DROM_OFF_CPUS,
	       POPMON_DROM_OFF_SLOTS, POPMON_DROM_SLOT_SIZE, (int)POPMON_DROM_SIZE, POPMON_DROM_MAGIC,
	       POPMON_DROM_PREREGISTERED, POPMON_DROM_RETURN_STOLEN, POPMON_DROM_STEAL_CPUS, POPMON_DROM_SYNC_QUERY);
	return 0;
}
`), 0o600)
	bin := filepath.Join(dir, "l")
	if out, err := exec.Command(cc, "-D_GNU_SOURCE", "-I", filepath.Join("..", "..", "shim"), "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{strconv.Itoa(MaxCPUs), strconv.Itoa(MaxSlots), strconv.Itoa(OffCPUs), strconv.Itoa(OffSlots), strconv.Itoa(SlotSize),
		strconv.Itoa(Size), "504f504d44524f01", strconv.Itoa(flagPreregistered), strconv.Itoa(flagReturnStolen), strconv.Itoa(FlagSteal), strconv.Itoa(FlagSyncQuery)}, " ")
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("C layout %q, Go %q", got, want)
	}
	// The slot fields (drom_shm.c asserts the same offsets).
	if offCur != 32 || offStolen != 160 || offStolen+8*words > SlotSize {
		t.Error("slot fields")
	}
}

// TestConcurrentSet: four tools setting masks of three processes at once
// (which adopt them meanwhile) end without a hang, with every process still
// registered and only the CPUs asked for owned, each by one.
func TestConcurrentSet(t *testing.T) {
	r := open(t)
	pids := []int{sleeper(t).Process.Pid, sleeper(t).Process.Pid, sleeper(t).Process.Pid}
	for i, p := range pids {
		if c := r.PreInit(p, mask(i), 0); c != Success {
			t.Fatal(c)
		}
	}
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func(g int) {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 300; i++ {
				p := pids[(g+i)%len(pids)]
				r.SetMask(p, mask((g+i)%4, (g+2*i)%4), 0)
				adopt(r, p) // the process's side, meanwhile
			}
		}(g)
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	var owned Mask
	for _, p := range r.Procs() {
		for _, c := range p.Future.CPUs() {
			if owned.Has(c) {
				t.Errorf("CPU %d has two owners", c)
			}
			owned.Set(c)
		}
		if p.Future.Minus(mask(0, 1, 2, 3)) != (Mask{}) {
			t.Errorf("process %d owns %s, beyond CPUs 0-3", p.PID, p.Future)
		}
	}
	if len(r.Procs()) != len(pids) {
		t.Errorf("%d processes left, want %d", len(r.Procs()), len(pids))
	}
}
