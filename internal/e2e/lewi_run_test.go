package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// lewiKey is a LeWI registry of the test's own (POPMON_LEWI_KEY), removed
// when it ends: tests running at the same time never share CPUs.
func lewiKey(t *testing.T) string {
	t.Helper()
	key := fmt.Sprintf("e2e-%d-%s", os.Getpid(), regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "-"))
	if len(key) > 60 {
		key = key[:60]
	}
	t.Cleanup(func() { os.Remove(fmt.Sprintf("/dev/shm/popmon-lewi-%d-%s", os.Geteuid(), key)) })
	return key
}

// bound is the launcher's option that binds each rank to one core.
func bound(impl mpiImpl, np int) []string {
	if impl.name == "mpich" {
		return append(launch(impl, np), "-bind-to", "core")
	}
	return append(launch(impl, np), "--bind-to", "core")
}

// lewiRun is one run of examples/lewi/lewi_imbalance: what it printed.
type lewiRun struct {
	checksum          string
	elapsed           float64
	wait, waitCPU     [2]float64
	items, extraItems [2]int64
	file, stdout      string
}

var lewiRankLine = regexp.MustCompile(`(?m)^rank (\d) wait_s ([0-9.]+) wait_cpu_s ([0-9.]+) items (\d+) extra_items (\d+) compute_s [0-9.]+$`)

func runLewiImbalance(t *testing.T, impl mpiImpl, key, prog string, lewi bool, args ...string) lewiRun {
	t.Helper()
	var flags []string
	if lewi {
		flags = []string{"--lewi"}
	}
	env := []string{"POPMON_LEWI_KEY=" + key}
	out, so, se, code := runPopmon(t, env, flags, append(append(bound(impl, 2), prog), args...)...)
	if code != 0 {
		t.Fatalf("popmon run %v: exit %d\nstdout:\n%s\nstderr:\n%s", flags, code, so, se)
	}
	if strings.Contains(se, "LeWI is off") {
		t.Fatalf("LeWI did not start:\n%s", se)
	}
	r := lewiRun{file: out, stdout: so}
	if m := regexp.MustCompile(`(?m)^checksum (0x[0-9a-f]+)$`).FindStringSubmatch(so); m != nil {
		r.checksum = m[1]
	}
	if m := regexp.MustCompile(`(?m)^elapsed_s ([0-9.]+)$`).FindStringSubmatch(so); m != nil {
		r.elapsed, _ = strconv.ParseFloat(m[1], 64)
	}
	ms := lewiRankLine.FindAllStringSubmatch(so, -1)
	if r.checksum == "" || r.elapsed <= 0 || len(ms) != 2 {
		t.Fatalf("unexpected output:\n%s\nstderr:\n%s", so, se)
	}
	for _, m := range ms {
		k, _ := strconv.Atoi(m[1])
		r.wait[k], _ = strconv.ParseFloat(m[2], 64)
		r.waitCPU[k], _ = strconv.ParseFloat(m[3], 64)
		r.items[k], _ = strconv.ParseInt(m[4], 10, 64)
		r.extraItems[k], _ = strconv.ParseInt(m[5], 10, 64)
	}
	return r
}

// TestLewiImbalance: examples/lewi/lewi_imbalance (2 ranks with one CPU
// each, rank 0 twice rank 1's work in short parallel regions, then
// MPI_Allreduce), plain and under --lewi, interleaved, with both MPIs and
// both OpenMP runtimes (LLVM's libomp through OMPT, GNU libgomp through
// GOMP_parallel). Designed: an iteration lasts 2 units plain, 1.5 under
// LeWI (rank 1 lends its CPU after its unit, rank 0's regions then run on
// both): 0.75 of the time, and a quarter of rank 0's items run on the
// borrowed CPU. Asserted, per MPI and runtime:
//   - the checksum is the plain run's;
//   - rank 0 ran at least 10 % of its items on a second thread (plain: none;
//     0 would mean LeWI did nothing);
//   - rank 1's CPU time while it waited in MPI_Allreduce is at most 10 % of
//     its wait (the lent CPU is free: MPICH spins otherwise);
//   - the measurement passes the schema and the accounts check, says LeWI
//     was on, rank 1 lent at least half its wait and rank 0 borrowed;
//   - with libomp, the best --lewi elapsed time of the rounds is at most
//     0.95 of the best plain one (designed 0.75; measured 0.75-0.81 on this
//     machine when quiet, BENCHMARKS.md, whose ceiling for the design is
//     0.76-0.79: the bound catches a LeWI that does nothing or keeps a
//     borrowed CPU into its owner's next unit, with room for a shared
//     machine, not the 0.8 target), asserted when the machine can give a
//     process two CPUs at the time: the control, the same program on one
//     unbound rank, must run in at most 0.7 of its 1-thread time with 2
//     threads. With other jobs time-sharing the CPUs a borrowed CPU is
//     shared too and every region waits for its thread there (the items
//     share above still shows LeWI at work).
func TestLewiImbalance(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			key := lewiKey(t)
			for _, rt := range []string{"clang", "gcc"} {
				prog := filepath.Join(dir, "lewi_imbalance."+rt)
				if _, err := os.Stat(prog); err != nil {
					t.Logf("%s not built: skipped", prog)
					continue
				}
				t.Run(rt, func(t *testing.T) {
					rounds := 1
					if rt == "clang" {
						rounds = 2
					}
					best := [2]float64{}
					var plain, lewi lewiRun
					for i := 0; i < rounds; i++ {
						// 24 iterations (0.5 s plain): the start-up's share
						// of the times stays small.
						iters := "24"
						plain = runLewiImbalance(t, impl, key, prog, false, iters)
						lewi = runLewiImbalance(t, impl, key, prog, true, iters)
						for k, r := range []lewiRun{plain, lewi} {
							if best[k] == 0 || r.elapsed < best[k] {
								best[k] = r.elapsed
							}
						}
						if lewi.checksum != plain.checksum {
							t.Errorf("checksum %s under --lewi, %s plain", lewi.checksum, plain.checksum)
						}
					}
					t.Logf("elapsed: plain %.3f s, --lewi %.3f s (%.2fx); rank 0's items on the borrowed CPU %d of %d; rank 1 waited %.3f s using %.4f s CPU (plain: %.3f s, %.4f s)",
						best[0], best[1], best[1]/best[0], lewi.extraItems[0], lewi.items[0],
						lewi.wait[1], lewi.waitCPU[1], plain.wait[1], plain.waitCPU[1])
					if plain.extraItems[0] != 0 {
						t.Errorf("plain run: rank 0 ran %d items on a second thread, want 0", plain.extraItems[0])
					}
					if lewi.extraItems[0]*10 < lewi.items[0] {
						t.Errorf("--lewi: rank 0 ran %d of %d items on a borrowed CPU, want at least 10 %%", lewi.extraItems[0], lewi.items[0])
					}
					if lewi.waitCPU[1] > 0.1*lewi.wait[1] {
						t.Errorf("--lewi: rank 1 used %.4f s CPU in %.4f s of waiting with its CPU lent, want at most 10 %%", lewi.waitCPU[1], lewi.wait[1])
					}
					if rt == "clang" && best[1] > 0.95*best[0] {
						msg := fmt.Sprintf("--lewi: best elapsed %.3f s, plain %.3f s: %.2fx, want at most 0.95x", best[1], best[0], best[1]/best[0])
						// The control: can this machine give one process two
						// CPUs now? Other jobs time-sharing the CPUs make a
						// second thread worth little, and every region waits
						// for it; LeWI cannot gain there.
						if c := twoCPUSpeedup(t, impl, prog); c > 0.7 {
							t.Logf("%s (not asserted: the same program on 1 rank with 2 threads takes %.2fx the time of 1 thread now; load average %.1f on %d CPUs)", msg, c, loadAverage(), runtime.NumCPU())
						} else {
							t.Errorf("%s (control: 2 threads take %.2fx the time of 1)", msg, c)
						}
					}
					m := readChecked(t, lewi.file)
					if m.Lewi == nil || m.Lewi.Processes != 2 || len(m.Processes) != 2 {
						t.Fatalf("the measurement's lewi record: %+v, processes %d", m.Lewi, len(m.Processes))
					}
					for _, p := range m.Processes {
						if p.Lewi == nil {
							t.Fatalf("rank %d has no lewi record", p.Rank)
						}
					}
					r0, r1 := m.Processes[0].Lewi, m.Processes[1].Lewi
					if m.Processes[0].Rank != 0 {
						r0, r1 = r1, r0
					}
					if float64(r1.LentCPUNS) < 0.5*lewi.wait[1]*1e9 {
						t.Errorf("rank 1 lent %d ns of CPU time, waited %.3f s", r1.LentCPUNS, lewi.wait[1])
					}
					if r0.BorrowedCPUNS <= 0 {
						t.Errorf("rank 0 borrowed no CPU time: %+v", r0)
					}
					pm := readChecked(t, plain.file)
					if pm.Lewi != nil || pm.Processes[0].Lewi != nil {
						t.Errorf("plain run has a lewi record: %+v", pm.Lewi)
					}
					checkLewiHeld(t, m, pm)
					so, se, code := popmon(t, nil, "report", lewi.file)
					if code != 0 || !regexp.MustCompile(`(?m)^LeWI: +on in 2 processes: .* CPU time lent, .* borrowed \(rank 0 lent .*, borrowed .*; rank 1 lent .*\)$`).MatchString(so) {
						t.Errorf("report: exit %d, no LeWI line:\n%s\n%s", code, so, se)
					}
				})
			}
		})
	}
}

// checkLewiHeld asserts the accounts of a --lewi run of lewi_imbalance (m)
// against the CPUs its ranks held over time: they are derived (the lent and
// borrowed times fit the accounts they lie in: rank 1's lent time its MPI
// time, rank 0's borrowed time its second thread's), rank 0 held more than
// its one CPU on average and rank 1 less, the two held no more than the
// node's 2 CPUs (5 % for the borrowed CPU shared until its region ends),
// and of that CPU time a larger share was useful than of the plain run's
// (pm) CPUs × elapsed: the lent wait is no longer the job's.
func checkLewiHeld(t *testing.T, m, pm *measure.Measurement) {
	t.Helper()
	r := pop.NewRun(m)
	h := r.LewiHeld
	if h == nil {
		t.Fatalf("no accounts against the CPUs held: %s", r.LewiHeldNote)
	}
	var u, cpu float64
	if g, ok := pm.Global(); ok {
		for _, a := range g.Processes {
			u += float64(a.UsefulNS)
			cpu += float64(a.ElapsedNS) * float64(a.CPUs)
		}
	}
	mean := map[int]float64{}
	for _, p := range r.LewiProcesses {
		mean[p.Rank] = p.Held.MeanCPUs()
	}
	t.Logf("held: %.2f CPUs on average (rank 0 %.2f, rank 1 %.2f), useful %.3f, MPI %.3f, OpenMP %.3f; plain: useful %.3f of CPUs x elapsed",
		h.MeanCPUs(), mean[0], mean[1], h.Share(h.UsefulNS), h.Share(h.MPINS), h.Share(h.OpenMPNS), u/cpu)
	if mean[0] <= 1 || mean[1] >= 1 || h.MeanCPUs() > 2.1 {
		t.Errorf("CPUs held on average: rank 0 %.2f (want > 1), rank 1 %.2f (want < 1), both %.2f (want at most 2.1)", mean[0], mean[1], h.MeanCPUs())
	}
	if h.Share(h.UsefulNS) <= u/cpu {
		t.Errorf("useful %.3f of the CPU time held under LeWI, %.3f of the plain run's CPUs x elapsed: want more", h.Share(h.UsefulNS), u/cpu)
	}
}

// TestLewiRespectCpuset: examples/drom/drom_phases (OpenMP, a team size
// printed per phase of 20 short regions) on CPU 0 only (taskset -c 0) under
// popmon run --no-mpi --lewi, three times in one LeWI registry: with the
// default --lewi-respect-cpuset its regions run on the one CPU it
// registered (1 thread); with --lewi-respect-cpuset=false CPU 1, which no
// process registered, is free and its regions borrow it (2 threads, and
// borrowed CPU time in its lewi record); with the default again, in the
// registry the second run made public, 1 thread. LLVM's libomp and GNU
// libgomp.
func TestLewiRespectCpuset(t *testing.T) {
	if testing.Short() {
		t.Skip("runs OpenMP programs")
	}
	if n := len(mustAffinity(t)); n < 2 {
		t.Skipf("needs 2 CPUs, this process has %d", n)
	}
	for _, cc := range []string{"clang", "gcc"} {
		t.Run(cc, func(t *testing.T) {
			prog := dromPhases(t, cc)
			env := []string{"POPMON_LEWI_KEY=" + lewiKey(t), "OMP_WAIT_POLICY=passive"}
			for i, respect := range []bool{true, false, true} {
				out := filepath.Join(t.TempDir(), "m.json")
				args := []string{"run", "--no-mpi", "--lewi", fmt.Sprintf("--lewi-respect-cpuset=%v", respect), "--format", "none", "-o", out,
					"--", "taskset", "-c", "0", prog, filepath.Join(t.TempDir(), "nostop"), "0.4"}
				so, se, code := popmon(t, env, args...)
				if code != 0 {
					t.Fatalf("popmon %v: exit %d\n%s%s", args, code, so, se)
				}
				teams := map[string]int{}
				for _, m := range regexp.MustCompile(`(?m)^phase \d+ threads (\d+)$`).FindAllStringSubmatch(so, -1) {
					teams[m[1]]++
				}
				want := map[bool]string{true: "1", false: "2"}[respect]
				n := teams["1"] + teams["2"]
				t.Logf("run %d, --lewi-respect-cpuset=%v: phases by team size %v", i+1, respect, teams)
				if n < 5 || teams[want]*10 < n*9 {
					t.Errorf("run %d, --lewi-respect-cpuset=%v: phases by team size %v, want %s threads in at least 90 %%", i+1, respect, teams, want)
				}
				m := readChecked(t, out)
				if len(m.Processes) != 1 || m.Processes[0].Lewi == nil {
					t.Fatalf("run %d: no lewi record", i+1)
				}
				if b := m.Processes[0].Lewi.BorrowedCPUNS; (b > 0) == respect {
					t.Errorf("run %d, --lewi-respect-cpuset=%v: borrowed %d ns of CPU time", i+1, respect, b)
				}
			}
		})
	}
}

// TestLewiUnbound: ranks not bound to CPUs of their own (every CPU in each
// mask): the second one cannot register its CPUs (a popmon: line in the
// measurement's warnings says to bind the ranks) and lends nothing, but its collectives take LeWI's path
// all the same (a nonblocking collective never matches a blocking one: an
// earlier version hung here with MPICH); the job ends with the plain run's
// checksum.
func TestLewiUnbound(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			prog := filepath.Join(examples(t, impl), "lewi_imbalance.clang")
			if _, err := os.Stat(prog); err != nil {
				t.Skip("lewi_imbalance.clang not built")
			}
			unbound := append(launch(impl, 2), "--bind-to", "none")
			if impl.name == "mpich" {
				unbound = append(launch(impl, 2), "-bind-to", "none")
			}
			env := []string{"POPMON_LEWI_KEY=" + lewiKey(t)}
			var sums []string
			for _, flags := range [][]string{nil, {"--lewi"}} {
				// 12 iterations (about 0.1 s): the accounts check's 1 % is
				// then not a few start-up scheduling slices (CI read 1.5 %
				// of a 12 ms run once).
				out, so, se, code := runPopmon(t, env, flags, append(unbound, prog, "12", "4", "32")...)
				m := regexp.MustCompile(`(?m)^checksum (0x[0-9a-f]+)$`).FindStringSubmatch(so)
				if code != 0 || m == nil {
					t.Fatalf("%v: exit %d\n%s\n%s", flags, code, so, se)
				}
				sums = append(sums, m[1])
				if flags != nil {
					// Said by the rank that could not register (the file
					// keeps every process's lines; rank 0 speaks for the job).
					m := readChecked(t, out)
					if !strings.Contains(strings.Join(m.Warnings, "\n")+se, "bind each rank to its own CPUs") {
						t.Errorf("no line saying to bind the ranks: warnings %q\n%s", m.Warnings, se)
					}
				}
			}
			if sums[0] != sums[1] {
				t.Errorf("checksums %v", sums)
			}
		})
	}
}

// lewiKillC: "omp MS PIDFILE" runs short parallel regions for MS ms and
// prints each change of its team size ("team N at EPOCH_MS"); "lend MS
// PIDFILE" registers with DLB_Init, lends its CPUs with DLB_Lend, holds
// them MS ms, then reclaims them and prints DLB_Reclaim's code and
// DLB_CheckCpuAvailability's for its CPU ("reclaim R available A"). Both
// write their pid to PIDFILE once started (lend: once lent). The DLB calls
// are looked up at run time: libpopmon (preloaded) defines them.
const lewiKillC = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pidfile(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	rename(tmp, path);
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	long long ms = atoll(argv[2]), end = ms_now() + ms;
	if (strcmp(argv[1], "omp") == 0) {
		pidfile(argv[3]);
		int last = 0;
		volatile double sink = 0;
		while (ms_now() < end) {
			int n = 0;
#pragma omp parallel
			{
#pragma omp single
				n = omp_get_num_threads();
				double x = 0;
				for (int i = 0; i < 200000; i++)
					x += i * 1e-9;
				sink += x;
			}
			if (n != last) {
				printf("team %d at %lld\n", n, ms_now());
				fflush(stdout);
				last = n;
			}
		}
		return 0;
	}
	int (*init)(int, const void *, const char *) = (int (*)(int, const void *, const char *))dlsym(RTLD_DEFAULT, "DLB_Init");
	int (*lend)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "DLB_Lend");
	int (*reclaim)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "DLB_Reclaim");
	int (*avail)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "DLB_CheckCpuAvailability");
	if (!init || !lend || !reclaim || !avail) {
		printf("no DLB\n");
		return 1;
	}
	cpu_set_t set;
	sched_getaffinity(0, sizeof set, &set);
	int cpu = 0;
	while (!CPU_ISSET(cpu, &set))
		cpu++;
	printf("init %d\n", init(0, NULL, NULL));
	printf("lend %d\n", lend());
	fflush(stdout);
	pidfile(argv[3]);
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
	printf("reclaim %d available %d\n", reclaim(), avail(cpu));
	return 0;
}
`

// startLewiProc starts `popmon run --no-mpi --lewi -- taskset -c CPU prog
// ARGS...` with its stdout in a file; returns the command and that file.
func startLewiProc(t *testing.T, key, prog string, cpu int, args ...string) (*exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	stdout := filepath.Join(dir, "stdout")
	f, err := os.Create(stdout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	argv := append([]string{"run", "--format", "none", "--no-mpi", "--lewi", "-o", filepath.Join(dir, "m.json"), "--",
		"taskset", "-c", strconv.Itoa(cpu), prog}, args...)
	cmd := exec.Command(popmonBin, argv...)
	cmd.Env = append(os.Environ(), "POPMON_LEWI_KEY="+key)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd, stdout
}

// waitForText polls until file has text (or the deadline): its content.
func waitForText(t *testing.T, file, text string, d time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		b, _ := os.ReadFile(file)
		if strings.Contains(string(b), text) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has no %q after %v:\n%s", file, text, d, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func killPidfile(t *testing.T, pidfile string) time.Time {
	t.Helper()
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file %q", b)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// TestLewiKilled: a process SIGKILLed while its CPU is lent, or while it
// runs on a borrowed CPU, leaves the other process running with its CPUs
// back (the registry has no lock to leave held; a dead process's entries
// are cleaned by the next process that touches them). Two programs without
// MPI on CPUs 0 and 1 (taskset), sharing the test's registry:
//   - lent: the lender is killed while an OpenMP program runs regions on
//     its lent CPU (team 2); the OpenMP program's teams go back to 1
//     within a second (its look for dead processes runs every 100 ms) and
//     it ends normally;
//   - borrowed: the OpenMP program is killed while its team runs on the
//     lender's CPU; the lender's DLB_Reclaim then gets the CPU back at once
//     (DLB_SUCCESS, not DLB_NOTED, which a live guest would give) and the
//     CPU is available to it (DLB_CheckCpuAvailability: DLB_SUCCESS).
func TestLewiKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(runOut(t, "nproc"))); n < 2 {
		t.Skip("needs 2 CPUs")
	}
	src := filepath.Join(t.TempDir(), "lewikill.c")
	if err := os.WriteFile(src, []byte(lewiKillC), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(filepath.Dir(src), "lewikill")
	if out, err := exec.Command("clang", "-O1", "-fopenmp", "-o", prog, src, "-ldl").CombinedOutput(); err != nil {
		t.Skipf("clang -fopenmp: %v\n%s", err, out)
	}
	// The library built once before the timed parts.
	popmon(t, nil, "run", "--format", "none", "--no-mpi", "-o", filepath.Join(t.TempDir(), "w.json"), "--", "true")
	t.Run("lent", func(t *testing.T) {
		key := lewiKey(t)
		pf := filepath.Join(t.TempDir(), "lender.pid")
		omp, ompOut := startLewiProc(t, key, prog, 0, "omp", "4000", filepath.Join(t.TempDir(), "omp.pid"))
		startLewiProc(t, key, prog, 1, "lend", "20000", pf)
		waitForText(t, ompOut, "team 2", 20*time.Second)
		killed := killPidfile(t, pf)
		if err := omp.Wait(); err != nil {
			b, _ := os.ReadFile(ompOut)
			t.Fatalf("the OpenMP program after its lender was killed: %v\n%s", err, b)
		}
		b, _ := os.ReadFile(ompOut)
		changes := regexp.MustCompile(`(?m)^team (\d+) at (\d+)$`).FindAllStringSubmatch(string(b), -1)
		last := changes[len(changes)-1]
		at, _ := strconv.ParseInt(last[2], 10, 64)
		back := time.UnixMilli(at).Sub(killed)
		t.Logf("team back to %s %v after the kill", last[1], back)
		if last[1] != "1" || back < -50*time.Millisecond || back > time.Second {
			t.Errorf("team changes %q: want the last to 1 within a second of the kill", changes)
		}
	})
	t.Run("borrowed", func(t *testing.T) {
		key := lewiKey(t)
		ompPid := filepath.Join(t.TempDir(), "omp.pid")
		_, lendOut := startLewiProc(t, key, prog, 1, "lend", "3000", filepath.Join(t.TempDir(), "lender.pid"))
		waitForText(t, lendOut, "lend 0", 20*time.Second)
		_, ompOut := startLewiProc(t, key, prog, 0, "omp", "20000", ompPid)
		waitForText(t, ompOut, "team 2", 20*time.Second)
		killPidfile(t, ompPid)
		out := waitForText(t, lendOut, "available", 20*time.Second)
		if !strings.Contains(out, "reclaim 0 available 0") {
			t.Errorf("the lender after its guest was killed: want reclaim 0 (DLB_SUCCESS) available 0:\n%s", out)
		}
	})
}

// twoCPUSpeedup runs prog (ratio 1) on one unbound rank with 2 threads and
// with 1 (best of 2 each, plain): the time of 2 over the time of 1, about
// 0.5 on an idle machine.
func twoCPUSpeedup(t *testing.T, impl mpiImpl, prog string) float64 {
	t.Helper()
	best := [2]float64{}
	for i := 0; i < 4; i++ {
		threads := 1 + i%2
		argv := append(launch(impl, 1), "-bind-to", "none")
		if impl.name != "mpich" {
			argv = append(launch(impl, 1), "--bind-to", "none", "-x", "OMP_NUM_THREADS")
		}
		so, se, code := runCommand(t, time.Minute, []string{fmt.Sprintf("OMP_NUM_THREADS=%d", threads)}, append(argv, prog, "12", "10", "64", "1")...)
		m := regexp.MustCompile(`(?m)^elapsed_s ([0-9.]+)$`).FindStringSubmatch(so)
		if code != 0 || m == nil {
			t.Logf("control run: exit %d\n%s%s", code, so, se)
			return 1
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		if k := threads - 1; best[k] == 0 || v < best[k] {
			best[k] = v
		}
	}
	return best[1] / best[0]
}

// loadAverage is the machine's 1-minute load average (0 when unknown).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func runOut(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return string(out)
}
