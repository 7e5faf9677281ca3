package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 30, items 3 and 4: no launch form hangs (MPMD lines where only some
// parts carry the library, a fork while another thread is inside a region,
// a collective query called by some ranks only), and popmon's own region
// API refuses a name that would be the Global region.

// hangDeadline: a case that ends later than this is a hang (each case ends
// in a few seconds: at finalize, 3 s at most for rank 0 waiting for a rank
// without the library, 10 s at most for a rank whose rank 0 lacks it, plus
// the program's own time).
const hangDeadline = 45 * time.Second

// prebuild builds the library for impl into the tests' cache first, so
// that the deadlines time the runs, not a compilation.
func prebuild(t *testing.T, impl mpiImpl) {
	t.Helper()
	if so, se, code := popmon(t, nil, "build", "--mpicc", impl.mpicc); code != 0 {
		t.Fatalf("popmon build --mpicc %s: exit %d\n%s%s", impl.mpicc, code, so, se)
	}
}

// mpmdLine is an MPMD launch line of one-rank parts, "P" for a part started
// by `popmon exec -o out` and "n" for a part without popmon (pattern "nP":
// rank 0 plain, rank 1 measured).
func mpmdLine(impl mpiImpl, pattern, prog, out string) []string {
	argv := append([]string{impl.mpirun}, impl.extra...)
	for i, c := range pattern {
		if i > 0 {
			argv = append(argv, ":")
		}
		argv = append(argv, "-np", "1")
		if c == 'P' {
			argv = append(argv, popmonBin, "exec", "--mpicc", impl.mpicc, "-o", out, "--")
		}
		argv = append(argv, prog, "50", "2")
	}
	return argv
}

// TestMPMDExecCombinations: every MPMD combination of parts with and
// without `popmon exec` ends within seconds, with either a measurement of
// the ranks that carry the library (marked incomplete when some do not) or,
// when rank 0 does not carry it, one line saying that no measurement was
// written and why. Rank 0 without the library used to hang the job (Open
// MPI for 675 s, until SIGKILL).
func TestMPMDExecCombinations(t *testing.T) {
	cases := []struct {
		pattern string
		written bool   // rank 0 carries the library: it writes the file
		missing string // the incomplete object's missing ranks ("" for a complete run)
	}{
		{"nP", false, ""},
		{"nPP", false, ""},
		{"PnP", true, "1"},
		{"Pn", true, "1"},
		{"PP", true, ""},
	}
	for _, impl := range impls(t) {
		for _, c := range cases {
			impl, c := impl, c
			t.Run(impl.name+"/"+c.pattern, func(t *testing.T) {
				prog := filepath.Join(examples(t, impl), "imbalance")
				prebuild(t, impl)
				out := filepath.Join(t.TempDir(), "m.json")
				argv := mpmdLine(impl, c.pattern, prog, out)
				start := time.Now()
				so, se, code := runCommand(t, hangDeadline, nil, argv...)
				took := time.Since(start)
				if code != 0 || !strings.Contains(so, "ok ") {
					t.Fatalf("%s: exit %d after %v (-1: killed at the deadline: a hang)\nstdout:\n%s\nstderr:\n%s",
						strings.Join(argv, " "), code, took.Round(time.Second), so, se)
				}
				t.Logf("ended after %v", took.Round(100*time.Millisecond))
				_, err := os.Stat(out)
				if !c.written {
					if err == nil {
						t.Errorf("a measurement without rank 0")
					}
					const want = "popmon: rank 0 did not say within 10 s that it loaded the measurement library, so the ranks that did"
					if n := strings.Count(se, want); n != 1 {
						t.Errorf("%d lines %q, want 1:\n%s", n, want, se)
					}
					return
				}
				m := readChecked(t, out)
				switch {
				case c.missing == "" && m.Incomplete != nil:
					t.Errorf("incomplete %+v, want a complete measurement", m.Incomplete)
				case c.missing != "" && (m.Incomplete == nil || m.Incomplete.MissingRanks != c.missing):
					t.Errorf("incomplete %+v, want missing ranks %s", m.Incomplete, c.missing)
				}
			})
		}
	}
}

// lateRank0C: rank 0 sleeps 5 s before MPI_Finalize, the others go there
// at once (no barrier, no other MPI call).
const lateRank0C = `#include <mpi.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		struct timespec ts = {5, 0};
		nanosleep(&ts, NULL);
		printf("ok late\n");
		fflush(stdout);
	}
	MPI_Finalize();
	return 0;
}
`

// TestExecRank0LateFinalize: under popmon exec, a rank that reaches
// MPI_Finalize 5 s before rank 0 waits for it (rank 0's message sent at
// its MPI_Init says it carries the library): both ranks are measured, and
// no line says that rank 0 did not load the library. A wait for rank 0
// bounded by a few seconds at finalize lost rank 1 with a false line.
func TestExecRank0LateFinalize(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			bin := compileMPI(t, impl, "late0", lateRank0C)
			prebuild(t, impl)
			out := filepath.Join(t.TempDir(), "m.json")
			argv := append(launch(impl, 2), popmonBin, "exec", "--mpicc", impl.mpicc, "-o", out, "--", bin)
			start := time.Now()
			so, se, code := runCommand(t, hangDeadline, nil, argv...)
			took := time.Since(start)
			if code != 0 || !strings.Contains(so, "ok late") {
				t.Fatalf("exit %d after %v (-1: a hang)\nstdout:\n%s\nstderr:\n%s", code, took.Round(time.Second), so, se)
			}
			if strings.Contains(se, "did not load") || strings.Contains(se, "did not take part") {
				t.Errorf("a rank gave up on rank 0:\n%s", se)
			}
			m := readChecked(t, out)
			if len(m.Processes) != 2 || m.Incomplete != nil || m.Partial != nil {
				t.Errorf("%d processes, incomplete %+v, partial %+v; want both ranks, complete", len(m.Processes),
					m.Incomplete, m.Partial)
			}
		})
	}
}

// TestMPMDRunPartlyPreloaded: `popmon run` over an MPMD line where one part
// drops LD_PRELOAD (env -u): rank 0 without the library ends within
// seconds with popmon run's sentence naming the ranks; a later part without
// it gives a measurement of the others marked incomplete.
func TestMPMDRunPartlyPreloaded(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			prog := filepath.Join(examples(t, impl), "imbalance")
			prebuild(t, impl)
			part := func(drop bool) []string {
				if drop {
					return []string{"-np", "1", "env", "-u", "LD_PRELOAD", prog, "50", "2"}
				}
				return []string{"-np", "1", prog, "50", "2"}
			}
			for _, c := range []struct {
				name  string
				drops []bool
			}{{"first-plain", []bool{true, false}}, {"middle-plain", []bool{false, true, false}}} {
				argv := append([]string{impl.mpirun}, impl.extra...)
				for i, d := range c.drops {
					if i > 0 {
						argv = append(argv, ":")
					}
					argv = append(argv, part(d)...)
				}
				out := filepath.Join(t.TempDir(), "m.json")
				start := time.Now()
				so, se, code := runCommand(t, hangDeadline, nil,
					append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--"}, argv...)...)
				took := time.Since(start)
				if code == -1 || !strings.Contains(so, "ok ") {
					t.Fatalf("%s: exit %d after %v (-1: a hang)\n%s%s", c.name, code, took.Round(time.Second), so, se)
				}
				if took > 20*time.Second {
					t.Errorf("%s: ended after %v, want a few seconds", c.name, took.Round(time.Second))
				}
				if c.drops[0] {
					if !strings.Contains(se, "rank 0 did not take part in popmon's finalize") {
						t.Errorf("%s: no explanation:\n%s", c.name, se)
					}
					continue
				}
				m := readChecked(t, out)
				if m.Incomplete == nil || m.Incomplete.MissingRanks != "1" {
					t.Errorf("%s: incomplete %+v, want rank 1 missing", c.name, m.Incomplete)
				}
			}
		})
	}
}

// compileMPI compiles the C source src (named name) with impl's MPI
// compiler against popmon.h, into a temporary folder.
func compileMPI(t *testing.T, impl mpiImpl, name, src string) string {
	t.Helper()
	dir := t.TempDir()
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	so, se, code := runCommand(t, 2*time.Minute, nil, impl.mpicc, "-std=gnu11", "-O1", "-pthread",
		"-I", filepath.Join(repoRoot, "shim"), "-o", bin, c)
	if code != 0 {
		t.Fatalf("%s %s: exit %d\n%s%s", impl.mpicc, c, code, so, se)
	}
	return bin
}

// forkerPy: one thread enters and leaves a region in a loop while the main
// thread forks 20 children that each enter the same region, ask for its
// local metrics and exit (half through os._exit, half through sys.exit:
// the library's exit path in a forked child). Prints how many children
// were still running after 10 s.
const forkerPy = `import os, sys, threading, time
import popmon

stop = False
def spin():
    r = popmon.region("busy")
    while not stop:
        with r:
            pass

t = threading.Thread(target=spin)
t.start()
time.sleep(0.05)
pids = []
for i in range(20):
    pid = os.fork()
    if pid == 0:
        with popmon.region("busy"):
            x = sum(range(1000))
        popmon.metrics_local("busy")
        if i % 2:
            sys.exit(0)
        os._exit(0)
    pids.append(pid)
deadline = time.time() + 10
left = set(pids)
while left and time.time() < deadline:
    for p in list(left):
        if os.waitpid(p, os.WNOHANG)[0]:
            left.discard(p)
    time.sleep(0.01)
stop = True
t.join()
for p in left:
    os.kill(p, 9)
    os.waitpid(p, 0)
print("children stuck", len(left))
`

// TestForkInsideRegion: a fork while another thread is inside a region
// (the multiprocessing fork pattern) leaves every child working: 19 of 20
// children used to deadlock on the region's lock, which the forked copy
// inherits held. The children are not measured (the library goes inert in
// a forked child that does not exec): one measurement, the parent's, with
// its "busy" region.
func TestForkInsideRegion(t *testing.T) {
	impl := impls(t)[0]
	prebuild(t, impl)
	script := filepath.Join(t.TempDir(), "forker.py")
	if err := os.WriteFile(script, []byte(forkerPy), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "f.json")
	start := time.Now()
	so, se, code := runCommand(t, hangDeadline, pyEnv, popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc,
		"-o", out, "--", pythonBin(t), script)
	if code != 0 || !strings.Contains(so, "children stuck 0\n") {
		t.Fatalf("exit %d after %v\nstdout:\n%s\nstderr:\n%s", code, time.Since(start).Round(time.Second), so, se)
	}
	m := readChecked(t, out)
	if r := compute(t, m, "talp"); r != nil {
		if g, ok := r.Region("busy"); !ok || g.Totals.Visits == 0 {
			t.Errorf("the parent's region busy: %+v", g)
		}
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*.json"))
	if len(files) != 1 {
		t.Errorf("measurement files %v, want the parent's only", files)
	}
}

// forkerC: the same in C: a thread loops over popmon_region_start/stop
// while the main thread forks 20 children that each use a region and exit
// (exit(), so the library's exit path runs in the child).
const forkerC = `#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "popmon.h"

static volatile int stop;
static void *spin(void *arg)
{
	popmon_region_t r = popmon_region_register("busy");
	(void)arg;
	while (!stop) {
		popmon_region_start(r);
		popmon_region_stop(r);
	}
	return NULL;
}

int main(void)
{
	pthread_t th;
	pthread_create(&th, NULL, spin, NULL);
	struct timespec ts = {0, 50000000};
	nanosleep(&ts, NULL);
	pid_t pids[20];
	for (int i = 0; i < 20; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			popmon_region_t r = popmon_region_register("child");
			popmon_region_start(r);
			popmon_region_stop(r);
			exit(0);
		}
	}
	int left = 20;
	for (int tries = 0; tries < 1000 && left > 0; tries++) {
		for (int i = 0; i < 20; i++)
			if (pids[i] > 0 && waitpid(pids[i], NULL, WNOHANG) == pids[i]) {
				pids[i] = 0;
				left--;
			}
		struct timespec p = {0, 10000000};
		nanosleep(&p, NULL);
	}
	stop = 1;
	pthread_join(th, NULL);
	for (int i = 0; i < 20; i++)
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
	printf("children stuck %d\n", left);
	return 0;
}
`

// TestForkInsideRegionC: the C form of TestForkInsideRegion.
func TestForkInsideRegionC(t *testing.T) {
	impl := impls(t)[0]
	bin := compileMPI(t, impl, "forker", forkerC)
	prebuild(t, impl)
	out := filepath.Join(t.TempDir(), "f.json")
	so, se, code := runCommand(t, hangDeadline, nil, popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc,
		"-o", out, "--", bin)
	if code != 0 || !strings.Contains(so, "children stuck 0\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
	}
	readChecked(t, out)
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*.json"))
	if len(files) != 1 {
		t.Errorf("measurement files %v, want the parent's only", files)
	}
}

// lonelyC: region "solve" (50 ms × (rank + 1)); then in mode "rank0" rank
// 0 alone calls the collective query popmon_metrics, in mode "notlast"
// every rank but the last, in mode "all" every rank calls it twice; then an
// MPI_Allreduce and MPI_Finalize.
const lonelyC = `#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "popmon.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	const char *mode = argc > 1 ? argv[1] : "rank0";
	popmon_region_t solve = popmon_region_register("solve");
	popmon_region_start(solve);
	struct timespec ts = {0, 50000000L * (rank + 1)};
	nanosleep(&ts, NULL);
	popmon_region_stop(solve);
	struct popmon_metrics m;
	memset(&m, 0, sizeof m);
	m.size = sizeof m;
	if (strcmp(mode, "notlast") == 0) {
		int size;
		MPI_Comm_size(MPI_COMM_WORLD, &size);
		if (rank != size - 1) {
			int rc = popmon_metrics("solve", POPMON_WINDOW_RUN, &m);
			printf("notlast rank %d rc %d\n", rank, rc);
			fflush(stdout);
		}
	} else if (strcmp(mode, "rank0") == 0) {
		if (rank == 0) {
			int rc = popmon_metrics("solve", POPMON_WINDOW_RUN, &m);
			printf("alone rc %d\n", rc);
			fflush(stdout);
		}
	} else {
		for (int i = 0; i < 2; i++) {
			int rc = popmon_metrics("solve", POPMON_WINDOW_RUN, &m);
			if (rank == 0)
				printf("all rc %d processes %d visits %lld\n", rc, m.processes, (long long)m.visits);
		}
	}
	int sum = 0, one = 1;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("ok %d\n", sum);
	MPI_Finalize();
	return 0;
}
`

// TestCollectiveQueryOneRank: a collective query called by rank 0 alone
// returns POPMON_ERR_TIMEOUT after the timeout (5 s) with one popmon: line,
// the program then ends normally (MPI_Finalize completes, the measurement
// is written); it used to wait forever. So does one that every rank but
// the last calls (4 ranks: a subtree of the first query's tree missing).
// A query every rank calls (4 ranks: GO down two levels) still returns
// the right values.
func TestCollectiveQueryOneRank(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			bin := compileMPI(t, impl, "lonely", lonelyC)
			prebuild(t, impl)
			argv := append(launch(impl, 3), bin, "rank0")
			start := time.Now()
			out, so, se, code := runPopmonDeadline(t, impl, argv...)
			took := time.Since(start)
			if code != 0 || !strings.Contains(so, "alone rc -9\n") || !strings.Contains(so, "ok 3\n") {
				t.Fatalf("exit %d after %v (-1: a hang)\nstdout:\n%s\nstderr:\n%s", code, took.Round(time.Second), so, se)
			}
			if n := strings.Count(se, "waited 5 s for ranks that did not call it"); n != 1 {
				t.Errorf("%d lines about the query, want 1:\n%s", n, se)
			}
			if took > 30*time.Second {
				t.Errorf("ended after %v, want seconds", took.Round(time.Second))
			}
			readChecked(t, out)

			// Four ranks, the last (rank 3, a leaf under rank 1 in the
			// first query's tree) never calls: every other rank returns
			// -9 with its line.
			out, so, se, code = runPopmonDeadline(t, impl, append(launch(impl, 4), bin, "notlast")...)
			if code != 0 || !strings.Contains(so, "ok 4\n") {
				t.Fatalf("notlast: exit %d (-1: a hang)\nstdout:\n%s\nstderr:\n%s", code, so, se)
			}
			for r := 0; r < 3; r++ {
				if want := fmt.Sprintf("notlast rank %d rc -9\n", r); !strings.Contains(so, want) {
					t.Errorf("notlast: no %q:\n%s", want, so)
				}
			}
			if n := strings.Count(se, "waited 5 s for ranks that did not call it"); n != 3 {
				t.Errorf("notlast: %d lines about the query, want 3 (one per rank that called):\n%s", n, se)
			}
			readChecked(t, out)

			// Every rank, four of them (rank 3 under rank 1: GO goes
			// down two levels of the tree).
			out, so, se, code = runPopmonDeadline(t, impl, append(launch(impl, 4), bin, "all")...)
			if code != 0 || strings.Count(so, "all rc 0 processes 4 visits 4\n") != 2 || strings.Contains(se, "waited") {
				t.Fatalf("every rank: exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
			}
			readChecked(t, out)
		})
	}
}

// runPopmonDeadline runs popmon run -o OUT -- argv with the hang deadline.
func runPopmonDeadline(t *testing.T, impl mpiImpl, argv ...string) (string, string, string, int) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "m.json")
	so, se, code := runCommand(t, hangDeadline, nil,
		append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--"}, argv...)...)
	return out, so, se, code
}

// globalC: mode "popmon" registers a region "global" with popmon's API
// (refused: one line, a handle that counts nothing), mode "dlb" registers
// "GLOBAL" with DLB's (DLB's rule: it is Global); each starts it, sleeps
// 100 ms, stops it, then sleeps 200 ms more.
const globalC = `#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "popmon.h"

void *DLB_MonitoringRegionRegister(const char *name) __attribute__((weak));
int DLB_MonitoringRegionStart(void *h) __attribute__((weak));
int DLB_MonitoringRegionStop(void *h) __attribute__((weak));

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	if (argc > 1 && strcmp(argv[1], "dlb") == 0) {
		void *h = DLB_MonitoringRegionRegister("GLOBAL");
		DLB_MonitoringRegionStart(h); /* already open: ignored */
		sleep_ms(100);
		printf("stop %d\n", DLB_MonitoringRegionStop(h));
	} else {
		popmon_region_t h = popmon_region_register("global");
		printf("start %d\n", popmon_region_start(h));
		sleep_ms(100);
		printf("stop %d\n", popmon_region_stop(h));
		popmon_region_t again = popmon_region_register("Global");
		printf("same %d\n", again == h);
	}
	sleep_ms(200);
	printf("ok\n");
	MPI_Finalize();
	return 0;
}
`

// TestRegionNamedGlobal: popmon's region API refuses a region named
// "global" (any case: the name is the whole run's region): one line, no
// region, its start and stop do nothing, and Global spans the whole run
// (it used to end at the region's stop, silently). DLB's API keeps DLB's
// rule (the name is Global) and says once that Global was stopped early.
func TestRegionNamedGlobal(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			bin := compileMPI(t, impl, "global", globalC)
			prebuild(t, impl)
			for _, c := range []struct {
				mode, line string
				global     [2]float64 // Global's elapsed ms, within
			}{
				{"popmon", `popmon: a region cannot be named "global"`, [2]float64{280, 2000}},
				{"dlb", "popmon: DLB_MonitoringRegionStop stopped the Global region before the end of the run", [2]float64{80, 250}},
			} {
				out, so, se, code := runPopmonDeadline(t, impl, append(launch(impl, 2), bin, c.mode)...)
				if code != 0 || !strings.Contains(so, "ok\n") {
					t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", c.mode, code, so, se)
				}
				if n := strings.Count(se, c.line); n != 1 {
					t.Errorf("%s: %d lines %q, want 1:\n%s", c.mode, n, c.line, se)
				}
				m := readChecked(t, out)
				rep := compute(t, m, "talp")
				g, _ := rep.Region("Global")
				if ms := float64(g.ElapsedNS) / 1e6; ms < c.global[0] || ms > c.global[1] {
					t.Errorf("%s: Global elapsed %.0f ms, want %v", c.mode, ms, c.global)
				}
				for _, r := range m.Regions {
					if strings.EqualFold(r.Name, "global") && r.Name != "Global" {
						t.Errorf("%s: a region %q in the measurement", c.mode, r.Name)
					}
				}
				// Per rank (the launcher may interleave the ranks' lines).
				if c.mode == "popmon" && (strings.Count(so, "start 2\n") != 2 || strings.Count(so, "stop 2\n") != 2 ||
					strings.Count(so, "same 1\n") != 2 || strings.Count(so, "start ") != 2 || strings.Count(so, "stop ") != 2 ||
					strings.Count(so, "same ") != 2) {
					t.Errorf("popmon: the refused handle's start and stop: want no-ops (2), the same handle again, from each of the 2 ranks:\n%s", so)
				}
			}
		})
	}
}

// TestPythonRegionNamedGlobal: `with popmon.region("global"):` in Python
// is refused the same way (one line) and Global spans the whole run.
func TestPythonRegionNamedGlobal(t *testing.T) {
	impl := impls(t)[0]
	prebuild(t, impl)
	script := filepath.Join(t.TempDir(), "global.py")
	src := "import time, popmon\nwith popmon.region(\"global\"):\n    time.sleep(0.1)\ntime.sleep(0.2)\nprint(\"ok\")\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, so, se, code := runPopmonDeadline(t, impl, pythonBin(t), script)
	if code != 0 || so != "ok\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
	}
	if n := strings.Count(se, `popmon: a region cannot be named "global"`); n != 1 {
		t.Errorf("%d refusal lines, want 1:\n%s", n, se)
	}
	rep := compute(t, readChecked(t, out), "talp")
	if g, _ := rep.Region("Global"); float64(g.ElapsedNS)/1e6 < 280 {
		t.Errorf("Global elapsed %.0f ms, want the whole run (300 ms)", float64(g.ElapsedNS)/1e6)
	}
	if _, ok := rep.Region("global"); ok {
		t.Error(`a region "global" in the report`)
	}
}

// quietRank0C: rank 0 sleeps 12 s after MPI_Init without any MPI call,
// then finalizes; the other ranks go straight to MPI_Finalize.
const quietRank0C = `#include <mpi.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		struct timespec ts = {12, 0};
		nanosleep(&ts, NULL);
	}
	printf("ok %d\n", rank);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
`

// TestExecQuietRank0OverTCP: popmon exec, rank 0 silent for 12 s after
// MPI_Init. Open MPI with its transport forced to TCP (btl tcp,self on lo):
// rank 0's "carries the library" message leaves only at rank 0's next MPI
// call, so rank 1 gives up after 10 s, and rank 0, which saw rank 1's
// announcement, used to wait for its HELLO forever. Now rank 1's HELLO
// says that it gave up: the job ends, and the measurement is either
// complete (the message came in time) or marked incomplete with rank 1
// missing because it gave up, and rank 1 says why in one line. MPICH runs
// its normal path (shared memory: the message comes at once, complete):
// over UCX's TCP (UCX_TLS=tcp,self) the message can come late too, and then
// MPICH 4.0.2's own MPI_Finalize hangs on rank 0 (UCX still flushing that
// message to a rank 1 already waiting in PMI), below popmon's handshake,
// which the gave-up HELLO ends (docs/library.md, "Finalize").
func TestExecQuietRank0OverTCP(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			var env []string
			if impl.name == "openmpi" {
				env = []string{"OMPI_MCA_btl=tcp,self", "OMPI_MCA_btl_tcp_if_include=lo"}
			}
			bin := compileMPI(t, impl, "quiet0", quietRank0C)
			prebuild(t, impl)
			out := filepath.Join(t.TempDir(), "m.json")
			argv := append(launch(impl, 2), popmonBin, "exec", "--mpicc", impl.mpicc, "-o", out, "--", bin)
			start := time.Now()
			so, se, code := runCommand(t, 30*time.Second, env, argv...)
			took := time.Since(start)
			if code != 0 || !strings.Contains(so, "ok 0") || !strings.Contains(so, "ok 1") {
				t.Fatalf("exit %d after %v (-1: killed at the deadline: a hang)\nstdout:\n%s\nstderr:\n%s", code,
					took.Round(time.Second), so, se)
			}
			m := readChecked(t, out)
			const line = "popmon: rank 0 did not say within 10 s that it loaded the measurement library, so the ranks that did (rank 1 of 2"
			if m.Incomplete == nil {
				t.Logf("rank 0's message came in time: complete (%v)", took.Round(100*time.Millisecond))
				if len(m.Processes) != 2 || strings.Contains(se, line) {
					t.Errorf("%d processes, want 2 and no line; stderr:\n%s", len(m.Processes), se)
				}
				return
			}
			t.Logf("rank 1 gave up: %s (%v)", m.Incomplete.Reason, took.Round(100*time.Millisecond))
			if m.Incomplete.MissingRanks != "1" || !strings.HasPrefix(m.Incomplete.Reason, "rank 1 of 2 gave up waiting for rank 0") ||
				len(m.Processes) != 1 {
				t.Errorf("incomplete %+v with %d processes, want rank 1 missing because it gave up", m.Incomplete,
					len(m.Processes))
			}
			if n := strings.Count(se, line); n != 1 {
				t.Errorf("%d lines %q, want 1:\n%s", n, line, se)
			}
		})
	}
}
