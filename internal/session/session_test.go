package session

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

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
	res, err := Read(dir, 10)
	if got := res.Files; err != nil || len(got) != 1 || got[0].PID != 10 {
		t.Fatalf("child's file not chosen: %+v %v", got, err)
	}
	res, _ = Read(dir, 99)
	if got := res.Files; len(got) != 1 || got[0].PID != 11 {
		t.Fatalf("longest file not chosen: %+v", got)
	}
	write("mpi-h-12.json", single(12, 1))
	res, _ = Read(dir, 10)
	if got := res.Files; len(got) != 1 || got[0].PID != 12 || !got[0].MPI {
		t.Fatalf("MPI file not preferred: %+v", got)
	}
}

func TestSessionExplainsUnmeasured(t *testing.T) {
	dir := t.TempDir()
	for r := 1; r <= 3; r++ {
		body := "rank " + strconv.Itoa(r) + "\nrank 0 did not take part in popmon's finalize: no measurement written\n"
		if err := os.WriteFile(filepath.Join(dir, "unmeasured-h-"+strconv.Itoa(100+r)+".txt"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "unmeasured-h-9.txt"), []byte("garbage"), 0o600)
	res, err := Read(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(res.Explain("mpirun", nil, 0), "\n")
	want := "rank 0 did not take part in popmon's finalize: no measurement written (ranks 1-3)\nno measurement was written"
	if got != want {
		t.Errorf("explain:\n%s\nwant:\n%s", got, want)
	}
	empty, _ := Read(t.TempDir(), 1)
	if got := strings.Join(empty.Explain("job.sh", nil, 0), "\n"); !strings.Contains(got, "job.sh ran no program popmon could measure") ||
		!strings.Contains(got, "LD_PRELOAD") {
		t.Errorf("explain without notes: %s", got)
	}
	if got := strings.Join(empty.Explain("mpirun", nil, syscall.SIGTERM), "\n"); got != "no measurement was written: mpirun was killed by SIGTERM before its processes finished (the library writes the measurement at MPI_Finalize, or at exit without MPI)" {
		t.Errorf("explain of a killed job: %s", got)
	}
}

func TestRankList(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		want string
	}{{[]int{3}, "rank 3"}, {[]int{3, 1, 2, 7}, "ranks 1-3, 7"}, {[]int{0, 2}, "ranks 0, 2"}} {
		if got := rankList(tt.in); got != tt.want {
			t.Errorf("rankList(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCheckLiveDir: the live folders popmon run makes are accepted.
func TestCheckLiveDir(t *testing.T) {
	oldBase := LiveBase
	LiveBase = t.TempDir()
	defer func() { LiveBase = oldBase }()
	session := t.TempDir()
	d, err := MakeLiveDir(session)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLiveDir(session, d); err != nil {
		t.Errorf("MakeLiveDir's %s refused: %v", d, err)
	}
	in := filepath.Join(session, "live")
	os.Mkdir(in, 0o700)
	if err := CheckLiveDir(session, in); err != nil {
		t.Errorf("the session's own live folder %s refused: %v", in, err)
	}
	other := t.TempDir()
	if err := CheckLiveDir(session, filepath.Join(other, "live")); err == nil {
		t.Errorf("another folder's live folder accepted")
	}
}

// TestDisabled: POPMON_DISABLE switches the library off by the library's
// rule (set, not empty, not 0, no or off; the last one counts).
func TestDisabled(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{nil, ""},
		{[]string{"POPMON_DISABLE="}, ""},
		{[]string{"POPMON_DISABLE=0"}, ""},
		{[]string{"POPMON_DISABLE=no"}, ""},
		{[]string{"POPMON_DISABLE=off"}, ""},
		{[]string{"POPMON_DISABLE=1"}, "1"},
		{[]string{"POPMON_DISABLE=yes"}, "yes"},
		{[]string{"POPMON_DISABLE=1", "POPMON_DISABLE=0"}, ""},
		{[]string{"XPOPMON_DISABLE=1", "POPMON_DISABLED=1"}, ""},
	} {
		v, ok := Disabled(c.env)
		if v != c.want || ok != (c.want != "") {
			t.Errorf("%q: %q %v, want %q", c.env, v, ok, c.want)
		}
	}
	if got := DisabledLine([]string{"POPMON_DISABLE=\x1b[31m"}); strings.ContainsRune(got, 0x1b) {
		t.Errorf("a control character printed: %q", got)
	}
}

// TestExplainWhatHappened: what popmon run saw (Saw) decides the sentence:
// POPMON_DISABLE names itself; a job none of whose processes started
// measuring is not blamed on a small file system.
func TestExplainWhatHappened(t *testing.T) {
	disabled := &Result{Full: "the file system of /x is full (60 KiB free)"}
	disabled.Saw(0, []string{"POPMON_DISABLE=1"})
	if got := strings.Join(disabled.Explain("mpirun", nil, 0), "\n"); !strings.Contains(got, "POPMON_DISABLE=1 is set") ||
		strings.Contains(got, "MPI_Finalize") || strings.Contains(got, "full") {
		t.Errorf("POPMON_DISABLE: %s", got)
	}
	never := &Result{Full: "the file system of /x is full (60 KiB free)"}
	never.Saw(0, nil)
	got := strings.Join(never.Explain("mpirun", nil, 0), "\n")
	if !strings.Contains(got, "no process that mpirun started was measured") || strings.Contains(got, "full") ||
		strings.Contains(got, "line above") || never.Full != "" {
		t.Errorf("never started on a small file system: %s (Full %q)", got, never.Full)
	}
	full := &Result{Full: "the file system of /x is full (0 KiB free)"}
	full.Saw(2, nil)
	if got := strings.Join(full.Explain("mpirun", nil, 0), "\n"); !strings.Contains(got, "is full") {
		t.Errorf("measured processes on a full file system: %s", got)
	}
	unknown := &Result{}
	unknown.Saw(-1, nil)
	if got := strings.Join(unknown.Explain("mpirun", nil, 0), "\n"); !strings.Contains(got, "did the program call MPI_Finalize") {
		t.Errorf("without live files: %s", got)
	}
}
