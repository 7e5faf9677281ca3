package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/popmon/popmon/internal/drom"
	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/pop"
)

// dromKey is a registry of the test's own, removed when it ends.
func dromKey(t *testing.T) []string {
	t.Helper()
	key := fmt.Sprintf("e2e-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { os.Remove(drom.Name(key)) })
	return []string{"POPMON_DROM_KEY=" + key}
}

// dromPhases builds examples/drom/drom_phases.c with cc (gcc: GNU libgomp,
// clang: LLVM libomp), skipping when it cannot.
func dromPhases(t *testing.T, cc string) string {
	t.Helper()
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no %s", cc)
	}
	if cc == "clang" {
		needLibomp(t)
	}
	bin := filepath.Join(t.TempDir(), "drom_phases."+cc)
	if out, err := exec.Command(cc, "-O2", "-fopenmp", "-o", bin, filepath.Join(repoRoot, "examples", "drom", "drom_phases.c")).CombinedOutput(); err != nil {
		t.Skipf("%s -fopenmp: %v\n%s", cc, err, out)
	}
	return bin
}

// phaseRun is drom_phases running under popmon run --drom: its phases'
// team sizes as they come.
type phaseRun struct {
	cmd    *exec.Cmd
	teams  chan int
	stop   string
	out    string
	stderr strings.Builder
	done   chan struct{} // closed when popmon run ended
	err    error         // its Wait's error, once done
}

var phaseRe = regexp.MustCompile(`^phase \d+ threads (\d+)$`)

func startPhases(t *testing.T, env []string, prog string, flags ...string) *phaseRun {
	t.Helper()
	dir := t.TempDir()
	r := &phaseRun{teams: make(chan int, 10000), stop: filepath.Join(dir, "stop"), out: filepath.Join(dir, "m.json"), done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	args := append(append([]string{"run", "--no-mpi", "--drom"}, flags...), "--format", "none", "-o", r.out, "--", prog, r.stop, "120")
	r.cmd = exec.CommandContext(ctx, popmonBin, args...)
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r.cmd.Cancel = func() error { return syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL) }
	r.cmd.Stderr = &r.stderr
	pipe, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			if m := phaseRe.FindStringSubmatch(sc.Text()); m != nil {
				n, _ := strconv.Atoi(m[1])
				r.teams <- n
			}
		}
		r.err = r.cmd.Wait()
		close(r.teams)
		close(r.done)
	}()
	t.Cleanup(func() {
		os.WriteFile(r.stop, nil, 0o644)
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	return r
}

// waitTeam waits until a phase ran with want threads and the next two did
// too (the change stays); it fails after d.
func (r *phaseRun) waitTeam(t *testing.T, want int, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	run := 0
	var seen []int
	for run < 3 {
		select {
		case n, ok := <-r.teams:
			if !ok {
				t.Fatalf("the program ended before its phases ran %d threads (teams %v)\nstderr:\n%s", want, seen, r.stderr.String())
			}
			seen = append(seen, n)
			if n == want {
				run++
			} else {
				run = 0
			}
		case <-deadline:
			t.Fatalf("no 3 phases in a row with %d threads within %v (last teams %v)", want, d, tail(seen, 20))
		}
	}
}

func tail(v []int, n int) []int {
	if len(v) > n {
		return v[len(v)-n:]
	}
	return v
}

// dromPID is the one process registered with this test's key.
func dromPID(t *testing.T, env []string) int {
	t.Helper()
	so, se, code := popmon(t, env, "taskset", "--list")
	if code != 0 {
		t.Fatalf("popmon taskset --list: exit %d\n%s%s", code, so, se)
	}
	lines := strings.Split(strings.TrimSpace(so), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "PID") {
		t.Fatalf("popmon taskset --list: want a header and one process, got:\n%s", so)
	}
	f := strings.Fields(lines[1])
	pid, err := strconv.Atoi(f[0])
	var own drom.Mask
	for _, c := range mustAffinity(t) {
		own.Set(c)
	}
	if err != nil || len(f) < 2 || f[1] != own.String() {
		t.Fatalf("popmon taskset --list: want the process on CPUs %s, got:\n%s", own, so)
	}
	return pid
}

// liveCPUs is the cpus field of pid's live file.
func liveCPUs(t *testing.T, pid int) int {
	t.Helper()
	files, _ := filepath.Glob(fmt.Sprintf("/dev/shm/popmon-%d/run-*/*.%d.live", os.Geteuid(), pid))
	if len(files) != 1 {
		t.Fatalf("live files of process %d: %v, want one", pid, files)
	}
	f, err := live.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	return s.CPUs
}

// TestDROMTaskset: `popmon taskset -p PID -c 0` on a running OpenMP program
// with 2 CPUs (under popmon run --drom) makes its next parallel regions run
// 1 thread on CPU 0 (every thread's affinity), the live file's CPUs say 1;
// `-c 0,1` gives it 2 threads again; the measurement says the CPUs changed.
// On LLVM's libomp (OMPT) and GNU libgomp (GOMP interposition); and with
// LeWI on too (--lewi, whose teams are the process's own busy CPUs and
// borrowed ones), where DROM's masks change its own CPUs in LeWI's
// registry: before they did, its teams stayed at 2 threads. The LeWI run's
// measurement has the own CPU time's change (negative: a CPU fewer for a
// while) and its accounts against the CPUs held (fewer than 2 on average).
func TestDROMTaskset(t *testing.T) {
	if testing.Short() {
		t.Skip("runs OpenMP programs")
	}
	if n := len(mustAffinity(t)); n < 2 {
		t.Skipf("needs 2 CPUs, this process has %d", n)
	}
	// kill: SIGKILL 500 ms after -c 0 took effect: the partial measurement
	// has the process's own CPUs one fewer from the change to its end.
	for _, c := range []struct {
		cc         string
		lewi, kill bool
	}{{"clang", false, false}, {"gcc", false, false}, {"clang", true, false}, {"gcc", true, false},
		{"gcc", false, true}, {"clang", true, true}} {
		cc, name, flags := c.cc, c.cc, []string(nil)
		if c.lewi {
			name, flags = cc+"/lewi", []string{"--lewi"}
		}
		if c.kill {
			name += "/killed"
		}
		t.Run(name, func(t *testing.T) {
			prog := dromPhases(t, cc)
			env := append(dromKey(t), "OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive")
			if c.lewi {
				env = append(env, "POPMON_LEWI_KEY="+lewiKey(t))
			}
			r := startPhases(t, env, prog, flags...)
			r.waitTeam(t, 2, 3*time.Minute) // the first run builds the library
			pid := dromPID(t, env)
			if so, se, code := popmon(t, env, "taskset", "-p", strconv.Itoa(pid), "-c", "0"); code != 0 || !strings.Contains(so, "affinity set to: 0\n") {
				t.Fatalf("popmon taskset -p %d -c 0: exit %d\n%s%s", pid, code, so, se)
			}
			r.waitTeam(t, 1, 20*time.Second)
			if aff := taskAffinities(t, pid); !allEqual(aff, "0") {
				t.Errorf("threads' CPUs after -c 0: %v, want 0 each", aff)
			}
			if n := liveCPUs(t, pid); n != 1 {
				t.Errorf("live file: %d CPUs after -c 0, want 1", n)
			}
			if c.kill {
				time.Sleep(500 * time.Millisecond)
				syscall.Kill(pid, syscall.SIGKILL)
				select {
				case <-r.done:
				case <-time.After(60 * time.Second):
					t.Fatal("popmon run did not end after its program was killed")
				}
				if m := readChecked(t, r.out); m.Partial == nil || m.Processes[0].CPUs != 2 {
					t.Fatalf("partial %+v, CPUs %d: want a partial measurement of 2 CPUs (its largest team)\n%s", m.Partial, m.Processes[0].CPUs, r.stderr.String())
				}
				if change := checkDROMHeld(t, r.out, c.lewi); change > -400e6 {
					t.Errorf("own CPU time changed by %d CPU-ns: want at least 0.4 s of one CPU fewer (killed 0.5 s after -c 0)", change)
				}
				return
			}
			if so, se, code := popmon(t, env, "taskset", "-p", strconv.Itoa(pid), "-c", "0,1"); code != 0 || !strings.Contains(so, "affinity set to: 0-1\n") {
				t.Fatalf("popmon taskset -p %d -c 0,1: exit %d\n%s%s", pid, code, so, se)
			}
			r.waitTeam(t, 2, 20*time.Second)
			if n := liveCPUs(t, pid); n != 2 {
				t.Errorf("live file: %d CPUs after -c 0,1, want 2", n)
			}
			os.WriteFile(r.stop, nil, 0o644)
			select {
			case <-r.done:
				if r.err != nil {
					t.Fatalf("popmon run: %v\n%s", r.err, r.stderr.String())
				}
			case <-time.After(60 * time.Second):
				t.Fatal("the program did not stop")
			}
			raw, err := os.ReadFile(r.out)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(raw), "DROM changed this process's CPUs during the run") {
				t.Errorf("the measurement does not say the CPUs changed:\n%s", r.stderr.String())
			}
			checkDROMHeld(t, r.out, c.lewi)
			// Gone from the registry at its end.
			if so, _, _ := popmon(t, env, "taskset", "--list"); !strings.Contains(so, "no process registered") {
				t.Errorf("after the end, popmon taskset --list:\n%s", so)
			}
		})
	}
}

// checkDROMHeld: the measurement of a --drom run whose CPUs DROM shrank to
// one for a while and gave back. Its record (lewi's with --lewi, drom's
// without) has the 2 CPUs it registered and their CPU time changed by less
// than 0 (one fewer for a while, not longer than the run); the accounts
// set against the CPUs held say fewer than 2 on average; without LeWI the
// report says so in its DROM line (with LeWI, LeWI's second line has it).
// It returns the change.
func checkDROMHeld(t *testing.T, file string, lewi bool) int64 {
	t.Helper()
	m := readChecked(t, file)
	if len(m.Processes) != 1 {
		t.Fatalf("%d processes", len(m.Processes))
	}
	p, r := m.Processes[0], pop.NewRun(m)
	own, change, held, note := 0, int64(0), r.DromHeld, r.DromHeldNote
	switch {
	case lewi && p.Lewi != nil:
		own, change, held, note = p.Lewi.OwnCPUs, p.Lewi.OwnChangeCPUNS, r.LewiHeld, r.LewiHeldNote
	case !lewi && p.Drom != nil:
		own, change = p.Drom.OwnCPUs, p.Drom.OwnChangeCPUNS
	default:
		t.Fatalf("no lewi (--lewi: %v) or drom record: %+v", lewi, p)
	}
	g, _ := m.Global()
	if g == nil || len(g.Processes) != 1 {
		t.Fatal("no whole-run accounts")
	}
	e := g.Processes[0].ElapsedNS
	if own != 2 || change >= 0 || -change > e {
		t.Errorf("own CPUs %d, their change %d CPU-ns in a run of %d ns: want 2, and between -%d and 0", own, change, e, e)
	}
	if held == nil {
		t.Fatalf("no accounts against the CPUs held: %s", note)
	}
	t.Logf("own CPU time changed by %.3f s; held %.2f CPUs on average over %.3f s", float64(change)/1e9, held.MeanCPUs(), float64(e)/1e9)
	if mc := held.MeanCPUs(); mc >= 2 || mc < 1 {
		t.Errorf("held %.2f CPUs on average: want 1-2", mc)
	}
	if lewi {
		return change
	}
	so, se, code := popmon(t, nil, "report", file)
	line := regexp.MustCompile(`(?m)^DROM: +changed CPUs; CPUs held over time: 1\.\d\d on average over .*$`).FindString(so)
	if code != 0 || line == "" {
		t.Errorf("report: exit %d, no DROM line:\n%s%s", code, so, se)
	}
	t.Log(line)
	return change
}

func mustAffinity(t *testing.T) []int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			m, err := drom.ParseMask(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return m.CPUs()
		}
	}
	t.Skip("no Cpus_allowed_list")
	return nil
}

// taskAffinities is each thread's Cpus_allowed_list.
func taskAffinities(t *testing.T, pid int) []string {
	t.Helper()
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
				out = append(out, strings.TrimSpace(v))
			}
		}
	}
	return out
}

func allEqual(v []string, want string) bool {
	for _, s := range v {
		if s != want {
			return false
		}
	}
	return len(v) > 0
}

// TestDROMAPI: examples/drom/drom_api.c, built against a `popmon dlb-home`
// prefix (DLB's headers, -ldlb) and run with DLB_ARGS=--drom, gets DLB
// 3.7's return codes from every DROM call (its own mask with and without
// DLB_NO_SYNC, another process's through stealing, DLB_ERR_PDIRTY,
// DLB_ERR_PERM, DLB_ERR_NOPROC, DLB_ERR_TIMEOUT, a SIGKILLed process's
// entry cleaned and its stolen CPU recovered, DLB_DROM_PreInit and
// PostFinalize); without --drom, DLB_PollDROM is DLB_ERR_NOCOMP.
func TestDROMAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C programs")
	}
	if n := len(mustAffinity(t)); n < 2 {
		t.Skipf("needs 2 CPUs, this process has %d", n)
	}
	home, bin := buildAgainstDLBHome(t, filepath.Join(repoRoot, "examples", "drom", "drom_api.c"))
	// bin/dlb_taskset is popmon taskset.
	if so, se, code := runCommand(t, 30*time.Second, dromKey(t), filepath.Join(home, "bin", "dlb_taskset"), "--list"); code != 0 || !strings.Contains(so, "no process registered") {
		t.Errorf("bin/dlb_taskset --list: exit %d\n%s%s", code, so, se)
	}
	for _, c := range []struct{ name, dlbArgs, arg string }{
		{"on", "--drom", ""},
		{"off", "", "off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := append(dromKey(t), "DLB_ARGS="+c.dlbArgs)
			argv := []string{bin}
			if c.arg != "" {
				argv = append(argv, c.arg)
			}
			so, se, code := runCommand(t, 60*time.Second, env, argv...)
			if code != 0 || strings.TrimSpace(so) != "ok" {
				t.Fatalf("%s: exit %d\n%s%s", strings.Join(argv, " "), code, so, se)
			}
			if se != "" {
				t.Errorf("stderr not empty:\n%s", se)
			}
		})
	}
}

// buildAgainstDLBHome lays out `popmon dlb-home --no-mpi` and builds the C
// program src against its dlb.h and libdlb.so (no MPI): the prefix and the
// program.
func buildAgainstDLBHome(t *testing.T, src string) (home, bin string) {
	t.Helper()
	home = filepath.Join(t.TempDir(), "dlb")
	if so, se, code := popmon(t, nil, "dlb-home", "--no-mpi", home); code != 0 {
		t.Fatalf("popmon dlb-home --no-mpi: exit %d\n%s%s", code, so, se)
	}
	bin = filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c"))
	args := []string{"-O1", "-o", bin, src,
		"-I" + filepath.Join(home, "include"), "-L" + filepath.Join(home, "lib"), "-ldlb", "-Wl,-rpath," + filepath.Join(home, "lib")}
	if out, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
		t.Fatalf("cc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return home, bin
}

// TestDROMTasksetExec: `popmon taskset -c 0 -- popmon run --drom -- prog`
// runs prog on CPU 0 with one thread, registered in the slot popmon taskset
// preregistered (no "DROM is off" line: its CPU was not another's).
func TestDROMTasksetExec(t *testing.T) {
	if testing.Short() {
		t.Skip("runs OpenMP programs")
	}
	prog := dromPhases(t, "gcc")
	env := dromKey(t)
	out := filepath.Join(t.TempDir(), "m.json")
	so, se, code := popmon(t, env, "taskset", "-c", "0", "--", popmonBin, "run", "--no-mpi", "--drom", "--format", "none", "-o", out, "--", prog, "/nonexistent", "0.2")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	if !strings.Contains(so, "threads 1\n") || strings.Contains(so, "threads 2") {
		t.Errorf("want every phase on 1 thread:\n%s", so)
	}
	if strings.Contains(se, "DROM is off") {
		t.Errorf("the program did not take its preregistered slot:\n%s", se)
	}
}

// TestDROMHostileRegistry: a registry that another user could write (mode
// 0644), of another size, a symbolic link, or another user's is refused by popmon taskset
// (one popmon line, exit 4) and by the library (one line, the program runs
// on without DROM).
func TestDROMHostileRegistry(t *testing.T) {
	if testing.Short() {
		t.Skip("runs OpenMP programs")
	}
	prog := dromPhases(t, "gcc")
	for _, c := range []struct {
		name, want string
		make       func(path string) error
	}{
		{"open", "open to other users", func(p string) error {
			if err := os.WriteFile(p, make([]byte, drom.Size), 0o644); err != nil {
				return err
			}
			return os.Chmod(p, 0o644)
		}},
		{"size", "another layout", func(p string) error { return os.WriteFile(p, make([]byte, 4096), 0o600) }},
		{"symlink", "cannot open", func(p string) error { return os.Symlink("/tmp", p) }},
		{"owner", "belongs to another user", func(p string) error {
			if os.Geteuid() != 0 {
				t.Skip("only root can give a file to another user")
			}
			if err := os.WriteFile(p, make([]byte, drom.Size), 0o600); err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := dromKey(t)
			path := drom.Name(strings.TrimPrefix(env[0], "POPMON_DROM_KEY="))
			if err := c.make(path); err != nil {
				t.Fatal(err)
			}
			so, se, code := popmon(t, env, "taskset", "--list")
			lines := strings.Split(strings.TrimSpace(se), "\n")
			if code != 4 || len(lines) != 1 || !strings.HasPrefix(lines[0], "popmon taskset: ") || !strings.Contains(se, c.want) {
				t.Errorf("popmon taskset --list: exit %d, stderr %q (want one line saying %q, exit 4)\n%s", code, se, c.want, so)
			}
			out := filepath.Join(t.TempDir(), "m.json")
			so, se, code = popmon(t, env, "run", "--no-mpi", "--drom", "--format", "none", "-o", out, "--", prog, "/nonexistent", "0.1")
			if code != 0 || !strings.Contains(so, "threads") || dromLines(se) != 1 || !strings.Contains(se, c.want) {
				t.Errorf("popmon run --drom: exit %d, want the program run and one line saying %q\nstdout:\n%s\nstderr:\n%s", code, c.want, so, se)
			}
		})
	}
}

func dromLines(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "DROM registry") || strings.Contains(l, "DROM is off") {
			n++
		}
	}
	return n
}

// TestDROMKilledProcess: a process registered with DROM and SIGKILLed
// leaves an entry that the next popmon taskset cleans: its CPUs are free
// for a new process.
func TestDROMKilledProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs OpenMP programs")
	}
	if n := len(mustAffinity(t)); n < 2 {
		t.Skipf("needs 2 CPUs, this process has %d", n)
	}
	prog := dromPhases(t, "gcc")
	so, se, code := popmon(t, nil, "build", "--no-mpi")
	if code != 0 {
		t.Fatalf("popmon build --no-mpi: exit %d\n%s%s", code, so, se)
	}
	lib := strings.TrimSpace(so)
	env := dromKey(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, "/nonexistent", "60")
	cmd.Env = append(append(os.Environ(), env...), "LD_PRELOAD="+lib, "POPMON_DROM=1", "OMP_NUM_THREADS=2")
	cmd.Dir = t.TempDir()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := 0
	for i := 0; i < 500 && pid == 0; i++ {
		if so, _, _ := popmon(t, env, "taskset", "--list"); strings.Contains(so, fmt.Sprintf("%d ", cmd.Process.Pid)) {
			pid = cmd.Process.Pid
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if pid == 0 {
		cmd.Process.Kill()
		t.Fatal("the program did not register")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if so, se, _ := popmon(t, env, "taskset", "--list"); !strings.Contains(so, "no process registered") {
		t.Errorf("after SIGKILL, popmon taskset --list:\n%s%s", so, se)
	}
	reg, err := drom.Open(drom.Name(strings.TrimPrefix(env[0], "POPMON_DROM_KEY=")), false)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	var all drom.Mask
	all.Set(0)
	all.Set(1)
	if c := reg.PreInit(os.Getpid(), all, 0); c != drom.Success {
		t.Errorf("CPUs 0-1 after the kill: PreInit %v, want DLB_SUCCESS (free)", c)
	}
	reg.PostFinalize(os.Getpid(), false)
}

// TestDROMTasksetLauncher: `popmon taskset -c 0,1 -- LAUNCHER` whose two
// measured processes run on CPU 0 and CPU 1 (a job's ranks): each takes its
// CPU from the slot popmon taskset preregistered (DLB's PreInit subset
// case), neither takes the whole slot nor is refused.
func TestDROMTasksetLauncher(t *testing.T) {
	if testing.Short() {
		t.Skip("runs OpenMP programs")
	}
	if n := len(mustAffinity(t)); n < 2 {
		t.Skipf("needs 2 CPUs, this process has %d", n)
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("no taskset (util-linux)")
	}
	prog := dromPhases(t, "gcc")
	so, se, code := popmon(t, nil, "build", "--no-mpi")
	if code != 0 {
		t.Fatalf("popmon build --no-mpi: exit %d\n%s%s", code, so, se)
	}
	env := append(dromKey(t), "LD_PRELOAD="+strings.TrimSpace(so))
	script := fmt.Sprintf("cd %s || exit 1; taskset -c 0 %s /nonexistent 0.3 & taskset -c 1 %s /nonexistent 0.3; wait", t.TempDir(), prog, prog)
	so, se, code = popmon(t, env, "taskset", "-c", "0,1", "--", "sh", "-c", script)
	if code != 0 || strings.Contains(se, "DROM") || strings.Count(so, "threads 1\n") < 4 || strings.Contains(so, "threads 2") {
		t.Errorf("exit %d; want both processes on 1 thread and no DROM line\nstdout:\n%s\nstderr:\n%s", code, so, se)
	}
}
