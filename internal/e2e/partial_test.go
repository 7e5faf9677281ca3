package e2e

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Issue 11: nothing measured is lost when the job ends before MPI_Finalize.

// partialRanks is the job size of the partial tests: 4 ranks (designed load
// balance 0.625) where the MPI yields the CPU, 2 (0.75) with MPICH, which
// busy-waits and would turn oversubscription into undesigned loss.
func partialRanks(impl mpiImpl) int {
	if impl.name == "mpich" {
		return 2
	}
	return 4
}

const partialK = 50 // ms: rank r works (r+1)*K per iteration

// ppid returns the parent of process pid, or 0.
func ppid(pid int) int {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(st)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	p, _ := strconv.Atoi(f[1])
	return p
}

// processes returns every process id of the machine.
func processes() []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// pids returns the processes named comm whose ancestors include root.
func pids(comm string, root int) []int {
	var out []int
	for _, pid := range processes() {
		if !isNamed(pid, comm) {
			continue
		}
		for p := pid; p > 1; p = ppid(p) {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// named reports whether every process of ps is still named comm.
func named(ps []int, comm string) bool {
	for _, pid := range ps {
		if !isNamed(pid, comm) {
			return false
		}
	}
	return true
}

// isNamed reports whether process pid's command is named comm (of which
// the kernel keeps the first 15 bytes).
func isNamed(pid int, comm string) bool {
	if len(comm) > 15 {
		comm = comm[:15]
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return err == nil && strings.TrimSpace(string(b)) == comm
}

// childOf returns a child process of parent, or 0.
func childOf(parent int) int {
	for _, pid := range processes() {
		if ppid(pid) == parent {
			return pid
		}
	}
	return 0
}

// started is a popmon run in the background.
type started struct {
	cmd    *exec.Cmd
	so, se bytes.Buffer
	out    string
	seen   time.Time // when all ranks were seen running
	ranks  []int
}

// startPartial starts `popmon run -- mpirun -np N prog args` (wrapped by
// wrap, e.g. timeout) in its own process group and waits until N processes
// named prog run under it.
func startPartial(t *testing.T, impl mpiImpl, np int, wrap []string, prog string, args ...string) *started {
	t.Helper()
	return startPartialWith(t, impl, runOpts{}, np, wrap, prog, args...)
}

// startRun is startPartial with more options of popmon run (flags).
func startRun(t *testing.T, impl mpiImpl, np int, flags, wrap []string, prog string, args ...string) *started {
	t.Helper()
	return startPartialWith(t, impl, runOpts{flags: flags}, np, wrap, prog, args...)
}

// startPartialWith is startPartial with options (environment, popmon run
// flags, the program's folder).
func startPartialWith(t *testing.T, impl mpiImpl, o runOpts, np int, wrap []string, prog string, args ...string) *started {
	t.Helper()
	dir := o.dir
	if dir == "" {
		dir = examples(t, impl)
	}
	s := &started{out: filepath.Join(t.TempDir(), "p.json")}
	argv := append(append([]string{}, wrap...), popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", s.out)
	argv = append(append(argv, o.flags...), "--")
	argv = append(append(argv, launch(impl, np)...), filepath.Join(dir, prog))
	argv = append(argv, args...)
	s.start(t, argv, o.env, np, prog)
	return s
}

// start runs argv (a popmon run, with env added to the environment) in its
// own process group and waits until np processes named prog run under it.
func (s *started) start(t *testing.T, argv, env []string, np int, prog string) {
	t.Helper()
	s.cmd = exec.Command(argv[0], argv[1:]...)
	if env != nil {
		s.cmd.Env = append(os.Environ(), env...)
	}
	s.cmd.Stdout, s.cmd.Stderr = &s.so, &s.se
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second) // the first run builds the library
	for time.Now().Before(deadline) {
		if s.ranks = pids(prog, s.cmd.Process.Pid); len(s.ranks) == np {
			s.seen = time.Now()
			// Still named so 50 ms later: a rank's child that has not
			// yet executed its program (a node agent) has the rank's
			// name for a moment.
			time.Sleep(50 * time.Millisecond)
			if named(s.ranks, prog) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.cmd.Wait()
	t.Fatalf("%d ranks of %s never ran\n%s", np, prog, s.se.String())
}

// session returns the session folder of the run (the only one next to its
// output).
func (s *started) session(t *testing.T) string {
	t.Helper()
	sessions, _ := filepath.Glob(filepath.Join(filepath.Dir(s.out), ".popmon-session-*"))
	if len(sessions) != 1 {
		t.Fatalf("session folders %v, want 1", sessions)
	}
	return sessions[0]
}

// killAll SIGKILLs popmon run, its process group and the ranks, waits for
// it and returns the session folder it left.
func (s *started) killAll(t *testing.T) string {
	t.Helper()
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	for _, pid := range s.ranks { // in their own groups under some launchers
		syscall.Kill(pid, syscall.SIGKILL)
	}
	s.wait(t)
	return s.session(t)
}

// wait waits for popmon run (at most 60 s) and returns its exit status.
func (s *started) wait(t *testing.T) syscall.WaitStatus {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("popmon run did not end\n%s", s.se.String())
	}
	ws, _ := s.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ws
}

// checkPartial reads a partial measurement and checks what every abnormal
// end must give: the reason, every rank, the cut near the event (at since
// the ranks were seen), the designed load balance, and per rank as many
// MPI_Allreduce calls as iterations fit before the cut (± 1).
func checkPartial(t *testing.T, file string, np int, reason string, at time.Duration, stderr string) *measure.Measurement {
	t.Helper()
	m := readChecked(t, file)
	p := m.Partial
	if p == nil {
		t.Fatalf("%s is not partial\n%s", file, stderr)
	}
	if m.Version != 3 {
		t.Errorf("version %d, want 3", m.Version)
	}
	if p.Reason != reason {
		t.Errorf("reason %q (%s), want %q", p.Reason, p.Detail, reason)
	}
	if p.Included != np || p.Ranks != np || p.MissingRanks != "" || len(m.Processes) != np {
		t.Errorf("%d of %d ranks included (missing %q), want all %d", p.Included, p.Ranks, p.MissingRanks, np)
	}
	cut := time.Duration(p.CutNS)
	// Within 1.5 s either way (issue 11): before the event by at most the
	// sampling interval and the ranks' start-up, after it by as long as
	// the ranks still ran (Open MPI's mpirun passes a SIGTERM on to its
	// ranks about half a second after it got it; what they measured
	// meanwhile is theirs: the call counts below check it).
	if at > 0 && (cut < at-1500*time.Millisecond || cut > at+1500*time.Millisecond) {
		t.Errorf("cut at %v after MPI_Init, the event %v after the ranks started: want within 1.5 s", cut, at)
	}
	rep, err := pop.Compute(m, pop.ModelTALP)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := rep.Region("Global")
	lb := float64(np+1) / float64(2*np)
	if v, ok := g.Value("mpi_load_balance"); !ok || math.Abs(v-lb) > 0.03 {
		t.Errorf("Global load balance %.3f (present %v), want %.3f ± 0.03", v, ok, lb)
	}
	glob, _ := m.Global()
	iter := float64(np*partialK) * 1e6
	for _, pa := range glob.Processes {
		want := float64(pa.ElapsedNS) / iter
		allreduce := float64(pa.MPICalls - 2) // rank and size
		if math.Abs(allreduce-want) > 1.5 {
			t.Errorf("rank %d: %.0f MPI_Allreduce in %.2f s, want %.1f ± 1", pa.Rank, allreduce, float64(pa.ElapsedNS)/1e9, want)
		}
	}
	if !strings.Contains(stderr, "measurement written to") {
		t.Errorf("popmon run did not say where the measurement is:\n%s", stderr)
	}
	return m
}

// midRun starts the imbalance demo (200 iterations) under popmon run and
// returns when it has run 2.5 s: the job size, the run, and how long its
// ranks have been running.
func midRun(t *testing.T, impl mpiImpl) (int, *started, time.Duration) {
	t.Helper()
	np := partialRanks(impl)
	s := startPartial(t, impl, np, nil, "imbalance", fmt.Sprint(partialK), "200")
	time.Sleep(2500 * time.Millisecond)
	return np, s, time.Since(s.seen)
}

// TestPartialKilledRanks: SIGKILL of every rank mid-run.
func TestPartialKilledRanks(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			np, s, at := midRun(t, impl)
			// Stopped first, so that the launcher's SIGTERM to the ranks
			// still alive after the first death (Open MPI sends one)
			// stays pending and every rank dies of the SIGKILL.
			for _, pid := range s.ranks {
				syscall.Kill(pid, syscall.SIGSTOP)
			}
			for _, pid := range s.ranks {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			if ws := s.wait(t); ws.ExitStatus() == 0 && !ws.Signaled() {
				t.Errorf("popmon run exited 0 for a killed job")
			}
			m := checkPartial(t, s.out, np, measure.PartialKilled, at, s.se.String())
			for _, e := range m.Partial.Ends {
				if e.End != "killed" {
					t.Errorf("rank %d ended %q, want killed", e.Rank, e.End)
				}
			}
		})
	}
}

// TestPartialTerminatedLauncher: SIGTERM to the launcher.
func TestPartialTerminatedLauncher(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			np, s, at := midRun(t, impl)
			launcher := childOf(s.cmd.Process.Pid)
			if launcher <= 0 {
				t.Fatal("no launcher under popmon run")
			}
			syscall.Kill(launcher, syscall.SIGTERM)
			s.wait(t)
			checkPartial(t, s.out, np, measure.PartialTerminated, at, s.se.String())
		})
	}
}

// TestPartialEndings: one rank crashes, aborts or exits without
// MPI_Finalize at iteration 20 (examples/ending.c).
func TestPartialEndings(t *testing.T) {
	for _, impl := range impls(t) {
		for _, c := range []struct {
			how, reason, end string
		}{
			{"1", measure.PartialCrashed, "signal 11 (SIGSEGV)"},
			{"2", measure.PartialAborted, "MPI_Abort(7)"},
			{"3", measure.PartialNoFinalize, "exit without MPI_Finalize"},
		} {
			t.Run(impl.name+"/"+c.reason, func(t *testing.T) {
				np := partialRanks(impl)
				const at = 20
				s := startPartial(t, impl, np, nil, "ending", fmt.Sprint(partialK), "200", c.how, "2", fmt.Sprint(at))
				ws := s.wait(t)
				if ws.ExitStatus() == 0 && !ws.Signaled() {
					t.Errorf("popmon run exited 0")
				}
				if c.reason == measure.PartialAborted && ws.ExitStatus() != 7 {
					t.Errorf("popmon run exited %d after MPI_Abort(…, 7), want 7 as the launcher", ws.ExitStatus())
				}
				// The event: iteration 20 starts after 19 iterations.
				event := time.Duration((at-1)*np*partialK) * time.Millisecond
				m := checkPartial(t, s.out, np, c.reason, event, s.se.String())
				for _, e := range m.Partial.Ends {
					if e.Rank == 1 && e.End != c.end {
						t.Errorf("rank 1 ended %q, want %q", e.End, c.end)
					}
				}
				if !strings.Contains(m.Partial.Detail, "rank 1") {
					t.Errorf("detail %q does not name rank 1", m.Partial.Detail)
				}
			})
		}
	}
}

// TestPartialTimeout: `timeout` around popmon run (SIGTERM to popmon run,
// which passes it on).
func TestPartialTimeout(t *testing.T) {
	impl := impls(t)[0]
	examples(t, impl)
	np := partialRanks(impl)
	// The library is built by now (examples and earlier tests): 4 s leave
	// about 3.5 s of run.
	s := startPartial(t, impl, np, []string{"timeout", "4"}, "imbalance", fmt.Sprint(partialK), "200")
	ws := s.wait(t)
	if ws.ExitStatus() != 124 {
		t.Errorf("exit status %d, want timeout's 124", ws.ExitStatus())
	}
	checkPartial(t, s.out, np, measure.PartialTerminated, 0, s.se.String())
}

// TestRecover: SIGKILL of popmon run and the whole job, then popmon
// recover on the session folder it left.
func TestRecover(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			np, s, at := midRun(t, impl)
			session := s.killAll(t)
			so, se, code := popmon(t, nil, "recover", "--format", "none", session)
			if code != 0 {
				t.Fatalf("recover exit %d\n%s%s", code, so, se)
			}
			m := checkPartial(t, s.out, np, measure.PartialKilled, at, se)
			if m.Partial.AssembledBy != "recover" {
				t.Errorf("assembled_by %q", m.Partial.AssembledBy)
			}
			if _, err := os.Stat(session); err == nil {
				t.Errorf("recover left the session folder %s", session)
			}
		})
	}
}

// TestPartialSecondJob: a job script runs a job that finishes, then one
// that aborts: the first keeps its complete measurement, the second gets a
// partial one next to it.
func TestPartialSecondJob(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	launcher := strings.Join(launch(impl, 2), " ")
	script := filepath.Join(t.TempDir(), "job.sh")
	os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\n%s %s/imbalance 50 3\n%s %s/ending 50 100 2 2 10\n",
		launcher, dir, launcher, dir)), 0o755)
	out, so, se, code := runPopmon(t, nil, []string{"--mpicc", impl.mpicc}, script)
	if code == 0 {
		t.Errorf("exit 0 for a script whose last job aborted\n%s%s", so, se)
	}
	first := readChecked(t, out)
	if first.Partial != nil || first.Version != 1 {
		t.Errorf("the finished job's file: version %d, partial %+v", first.Version, first.Partial)
	}
	second := strings.TrimSuffix(out, ".json") + ".1.json"
	m := readChecked(t, second)
	if m.Partial == nil || m.Partial.Reason != measure.PartialAborted || m.Partial.Included != 2 {
		t.Fatalf("the aborted job's file: partial %+v\n%s", m.Partial, se)
	}
}

// TestTop: popmon top --once on a running job shows its load balance.
func TestTop(t *testing.T) {
	impl := impls(t)[0]
	np, session := watchedJob(t, impl)
	start := time.Now()
	so, se, code := popmon(t, nil, "top", "--once", session)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("top took %v, want the frame within 5 s", d)
	}
	var global []string
	for _, line := range strings.Split(so, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "Global" && global == nil {
			global = f
		}
	}
	// Global PE CommE LB OMP-PE | PE CommE LB OMP-PE
	if len(global) < 10 {
		t.Fatalf("no Global row:\n%s", so)
	}
	design := float64(np+1) / float64(2*np)
	for _, i := range []int{3, 8} { // LB so far, LB now
		v, err := strconv.ParseFloat(global[i], 64)
		if err != nil || math.Abs(v-design) > 0.05 {
			t.Errorf("Global LB %q (column %d), want %.3f ± 0.05\n%s", global[i], i, design, so)
		}
	}
	if !strings.Contains(so, fmt.Sprintf("%d ranks", np)) || !strings.Contains(so, "MPI_Allreduce") {
		t.Errorf("frame lacks the ranks or the MPI calls:\n%s", so)
	}
}

// TestPartialOpenMPAndCounters: a hybrid job killed mid-run keeps what its
// processes' live files hold beyond the accounts: every OpenMP construct
// (with its source line in the report) and what the processes said of
// their hardware counters.
func TestPartialOpenMPAndCounters(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	compilers(t, dir, "hybrid_mpi_idle") // skips without an OpenMP build
	if _, err := os.Stat(filepath.Join(dir, "hybrid_mpi_idle.clang")); err != nil {
		t.Skip("hybrid_mpi_idle.clang was not built (no clang)")
	}
	t.Setenv("OMP_NUM_THREADS", "2")
	t.Setenv("OMP_WAIT_POLICY", "passive")
	s := startPartial(t, impl, 2, nil, "hybrid_mpi_idle.clang", "100", "40")
	time.Sleep(2500 * time.Millisecond)
	for _, pid := range s.ranks {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	s.wait(t)
	m := readChecked(t, s.out)
	if m.Partial == nil || m.Partial.Included != 2 {
		t.Fatalf("partial %+v\n%s", m.Partial, s.se.String())
	}
	// Two constructs (the balanced region, the turn's region), each
	// executed by both ranks, in the program itself.
	if len(m.OMPRegions) != 2 {
		t.Fatalf("%d OpenMP constructs, want 2: %+v", len(m.OMPRegions), m.OMPRegions)
	}
	for _, o := range m.OMPRegions {
		if filepath.Base(o.Module) != "hybrid_mpi_idle.clang" || o.Executions < 4 || o.Threads != 2 || o.UsefulNS <= 0 || o.WallNS <= 0 {
			t.Errorf("construct %+v", o)
		}
	}
	if m.OpenMP == nil || !m.OpenMP.OMPT {
		t.Errorf("openmp %+v: want OMPT measured", m.OpenMP)
	}
	// This machine has no PMU: the reason the processes gave is kept.
	c := m.Counters
	if c == nil || c.Mode != "auto" {
		t.Fatalf("counters %+v, want the processes' state (mode auto)", c)
	}
	if c.Available != m.Resources.HardwareCounters || (!c.Available && !strings.HasPrefix(c.Reason, "counters unavailable")) {
		t.Errorf("counters %+v, hardware_counters %v", c, m.Resources.HardwareCounters)
	}
	so, se, code := popmon(t, nil, "report", s.out)
	if code != 0 || !strings.Contains(so, "hybrid_mpi_idle.c:") {
		t.Errorf("report: exit %d, no source line of the constructs\n%s%s", code, so, se)
	}
}
