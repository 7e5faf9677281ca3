package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Issue 10: every program gets either correct metrics or one clear sentence
// saying what was not measured and why; never a hang, a crash or a hole.

// launch returns the launcher part of a command line: mpirun -np N.
func launch(impl mpiImpl, np int) []string {
	return append(append([]string{impl.mpirun}, impl.extra...), "-np", fmt.Sprint(np))
}

// runPopmon runs `popmon run --format none -o OUT [flags] -- argv` with a
// deadline, and returns the output file, stdout, stderr and exit code.
func runPopmon(t *testing.T, env []string, flags []string, argv ...string) (string, string, string, int) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "m.json")
	args := append(append([]string{"run", "--format", "none", "-o", out}, flags...), "--")
	so, se, code := popmon(t, env, append(args, argv...)...)
	return out, so, se, code
}

// readChecked reads a measurement, validates it against the schema and
// checks the accounts invariant of POP-METRICS.md §1 (every process's
// accounts add up to elapsed × CPUs within 1 %).
func readChecked(t *testing.T, file string) *measure.Measurement {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(raw) {
		t.Errorf("%s is not valid UTF-8", file)
	}
	if err := measure.ValidateSchema(raw); err != nil {
		t.Errorf("%s does not match the schema: %v", file, err)
	}
	m, err := measure.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range measure.CheckAccounts(m) {
		t.Errorf("%s: accounts invariant broken: %+v", file, v)
	}
	return m
}

func compute(t *testing.T, m *measure.Measurement, model pop.Model) *pop.Report {
	t.Helper()
	rep, err := pop.Compute(m, model)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// value returns metric id of region (failing when absent).
func value(t *testing.T, rep *pop.Report, region, id string) float64 {
	t.Helper()
	g, ok := rep.Region(region)
	if !ok {
		t.Fatalf("no region %q (have %v)", region, rep.RegionNames())
	}
	v, ok := g.Value(id)
	if !ok {
		t.Fatalf("%s: %s absent (refused: %q)", region, id, rep.Refused)
	}
	return v
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if got < want-tol || got > want+tol {
		t.Errorf("%s = %.4f, want %.4f ± %.2f", what, got, want, tol)
	}
}

// TestNumThreadsOverride: a num_threads(4) clause overrides
// OMP_NUM_THREADS=2 after a serial start: 4 CPUs per process, the serial
// start is serialization of 3 CPUs (PE 0.625), and the accounts add up.
func TestNumThreadsOverride(t *testing.T) {
	for _, impl := range impls(t) {
		dir := examples(t, impl)
		for _, cc := range compilers(t, dir, "team_override") {
			impl, cc := impl, cc
			t.Run(impl.name+"/"+cc, func(t *testing.T) {
				// 2 ranks of 4 threads on the cores: 500 ms units keep the
				// scheduler's time slices under 1 % (CI read Open MPI's
				// MPI parallel efficiency 0.979 on libomp with 200 ms).
				argv := append(launch(impl, 2), filepath.Join(dir, "team_override."+cc), "500", "500")
				m, reps, file := ompRun(t, []string{"OMP_NUM_THREADS=2"}, []string{"--mpicc", impl.mpicc}, argv...)
				readChecked(t, file)
				for _, p := range m.Processes {
					if p.CPUs != 4 {
						t.Errorf("rank %d: %d CPUs, want 4 (the largest team, not OMP_NUM_THREADS)", p.Rank, p.CPUs)
					}
				}
				checkAll(t, reps, file, []want{
					{pop.ModelTALP, "Global", "parallel_efficiency", 0.625},
					{pop.ModelTALP, "Global", "omp_parallel_efficiency", 0.625},
					{pop.ModelTALP, "Global", "omp_serialization_efficiency", 0.625},
					{pop.ModelTALP, "Global", "omp_load_balance", 1},
					{pop.ModelTALP, "Global", "mpi_parallel_efficiency", 1},
				})
			})
		}
	}
}

// TestMPIF08: a `use mpi_f08` program is measured like the others.
func TestMPIF08(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			if _, err := os.Stat(filepath.Join(dir, "imbalance_f08")); err != nil {
				t.Skip("imbalance_f08 not built (no Fortran compiler)")
			}
			k, iters := imbalanceArgs(impl, 4)
			r := measureRun(t, impl, 4, "imbalance_f08", fmt.Sprint(k), fmt.Sprint(iters))
			readChecked(t, r.file)
			if r.m.Resources.Processes != 4 || !r.m.HasMPI() {
				t.Fatalf("resources %+v, MPI %v: the f08 calls did not reach popmon", r.m.Resources, r.m.MPI)
			}
			r.expect(t, "Global", "mpi_load_balance", 0.625, effTol)
			r.expect(t, "Global", "parallel_efficiency", 0.625, effTol)
			if got, want := r.calls("MPI_Allreduce"), int64(4*(iters+1)); got != want {
				t.Errorf("MPI_Allreduce calls %d, want %d", got, want)
			}
			if r.calls("MPI_Sendrecv") != int64(4*iters) || r.calls("MPI_Get_processor_name") != 4 {
				t.Errorf("calls %+v", r.m.MPICalls)
			}
		})
	}
}

// TestSessionsNotMeasured: MPI-4 Sessions without MPI_Init get one line,
// no measurement passed off as the job's.
func TestSessionsNotMeasured(t *testing.T) {
	for _, impl := range impls(t) {
		dir := examples(t, impl)
		prog := filepath.Join(dir, "sessions")
		if _, err := os.Stat(prog); err != nil {
			continue // MPI-3 library (Open MPI 4): no Sessions
		}
		t.Run(impl.name, func(t *testing.T) {
			file, so, se, code := runPopmon(t, nil, nil, append(launch(impl, 2), prog)...)
			if code != 0 || !strings.Contains(so, "ok 2") {
				t.Fatalf("exit %d, stdout %q\n%s", code, so, se)
			}
			if !strings.Contains(se, "popmon: the program uses MPI Sessions (MPI_Session_init) without MPI_Init") {
				t.Errorf("no sentence about Sessions:\n%s", se)
			}
			if n := strings.Count(se, "MPI Sessions"); n != 1 {
				t.Errorf("the sentence is printed %d times:\n%s", n, se)
			}
			if _, err := os.Stat(file); err == nil {
				t.Errorf("a measurement was written for a Sessions program")
			}
		})
	}
}

// TestStaticMPIRefused: MPI linked statically into the program.
func TestStaticMPIRefused(t *testing.T) {
	for _, impl := range impls(t) {
		dir := examples(t, impl)
		prog := filepath.Join(dir, "imbalance_static")
		if _, err := os.Stat(prog); err != nil {
			continue // only MPICH ships a static library
		}
		t.Run(impl.name, func(t *testing.T) {
			file, so, se, code := runPopmon(t, nil, nil, append(launch(impl, 2), prog)...)
			if code != 0 || !strings.Contains(so, "ok ") {
				t.Fatalf("exit %d, stdout %q\n%s", code, so, se)
			}
			want := "the program's MPI calls did not reach popmon: MPI is linked statically into " + prog
			if !strings.Contains(se, want) || !strings.Contains(se, "relink it with the shared MPI library") {
				t.Errorf("stderr lacks %q:\n%s", want, se)
			}
			if _, err := os.Stat(file); err == nil {
				t.Errorf("a measurement was written")
			}
		})
	}
}

// TestOwnPMPIWrappersRefused: a program with its own MPI_Allreduce wrapper.
func TestOwnPMPIWrappersRefused(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			prog := filepath.Join(dir, "own_wrappers")
			file, so, se, code := runPopmon(t, nil, nil, append(launch(impl, 2), prog)...)
			if code != 0 || !strings.Contains(so, "(own wrapper: 5 calls)") {
				t.Fatalf("exit %d, stdout %q\n%s", code, so, se)
			}
			m := readChecked(t, file)
			want := prog + " defines MPI_Allreduce itself (its own PMPI wrappers)"
			if m.Interception == nil || !strings.Contains(m.Interception.Reason, want) {
				t.Fatalf("interception %+v, want %q", m.Interception, want)
			}
			rep := compute(t, m, pop.ModelTALP)
			if !strings.Contains(rep.Refused, "did not all reach popmon") {
				t.Errorf("refused %q", rep.Refused)
			}
			out, _, code := popmon(t, nil, "report", file)
			if code != 3 || !strings.Contains(out, "No POP metrics: the program's MPI calls did not all reach popmon: "+want) ||
				strings.Contains(out, "Load Balance") {
				t.Errorf("report (exit %d):\n%s", code, out)
			}
			// popmon run prints the refused report and nothing after it:
			// no empty "popmon: " line for the report's exit 3.
			out2 := filepath.Join(t.TempDir(), "printed.json")
			_, se, code = popmon(t, nil, append([]string{"run", "-o", out2, "--"}, append(launch(impl, 2), prog)...)...)
			if code != 0 || !strings.Contains(se, "No POP metrics: the program's MPI calls did not all reach popmon") {
				t.Errorf("run with the report (exit %d):\n%s", code, se)
			}
			for _, line := range strings.Split(se, "\n") {
				if l := strings.TrimSpace(line); l == "popmon:" || l == "popmon run:" {
					t.Errorf("run: stderr has an empty error line %q:\n%s", line, se)
				}
			}
		})
	}
}

// TestPMPIToolChained: another PMPI tool preloaded with popmon. After
// popmon's library (popmon run puts its own first), both tools see every
// call; a job script that puts the tool first gets the sentence saying the
// order to use.
func TestPMPIToolChained(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			tool := filepath.Join(dir, "libpmpi_tool.so")
			k, iters := imbalanceArgs(impl, 2)
			argv := append(launch(impl, 2), filepath.Join(dir, "imbalance"), fmt.Sprint(k), fmt.Sprint(iters))
			file, so, se, code := runPopmon(t, []string{"LD_PRELOAD=" + tool}, nil, argv...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, so, se)
			}
			for r := 0; r < 2; r++ {
				if line := fmt.Sprintf("pmpi_tool: rank %d: %d MPI_Allreduce calls", r, iters); !strings.Contains(so, line) {
					t.Errorf("the tool did not count: stdout lacks %q:\n%s", line, so)
				}
			}
			m := readChecked(t, file)
			if m.Interception != nil {
				t.Errorf("interception %+v", m.Interception)
			}
			near(t, "load balance", value(t, compute(t, m, pop.ModelTALP), "Global", "mpi_load_balance"), 0.75, effTol)

			// The tool first: popmon says so.
			script := filepath.Join(t.TempDir(), "tool_first.sh")
			os.WriteFile(script, []byte("#!/bin/sh\nexport LD_PRELOAD=\""+tool+":$LD_PRELOAD\"\nexec \"$@\"\n"), 0o755)
			argv = append(launch(impl, 2), script, filepath.Join(dir, "imbalance"), fmt.Sprint(k), fmt.Sprint(iters))
			file, so, se, code = runPopmon(t, nil, nil, argv...)
			if code != 0 || !strings.Contains(so, "pmpi_tool: rank 0") {
				t.Fatalf("exit %d\n%s\n%s", code, so, se)
			}
			m = readChecked(t, file)
			if m.Interception == nil || !strings.Contains(m.Interception.Reason, "libpmpi_tool.so wraps MPI_Allreduce") ||
				!strings.Contains(m.Interception.Reason, "put libpopmon first") {
				t.Errorf("interception %+v", m.Interception)
			}
		})
	}
}

// TestThreadMultiple: POSIX threads that call MPI are CPUs of their
// process; most of their time is in MPI, which the tree shows.
func TestThreadMultiple(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			l := "300"
			if impl.name == "mpich" {
				l = "1000" // MPICH's MPI_Recv busy-waits: longer, so its delays stay small
			}
			file, so, se, code := runPopmon(t, []string{"OMPI_MCA_mpi_yield_when_idle=1"}, nil,
				append(launch(impl, 2), filepath.Join(dir, "thread_multiple"), l, "2")...)
			if code != 0 || !strings.Contains(so, "ok 2") {
				t.Fatalf("exit %d, stdout %q\n%s", code, so, se)
			}
			m := readChecked(t, file)
			for _, p := range m.Processes {
				if p.CPUs != 3 || p.MPIThreads != 2 {
					t.Errorf("rank %d: %d CPUs (%d MPI threads), want 3 (2)", p.Rank, p.CPUs, p.MPIThreads)
				}
			}
			rep := compute(t, m, pop.ModelTALP)
			near(t, "parallel efficiency", value(t, rep, "Global", "parallel_efficiency"), 2.0/3, effTol)
			near(t, "MPI parallel efficiency", value(t, rep, "Global", "mpi_parallel_efficiency"), 2.0/3, effTol)
			near(t, "load balance", value(t, rep, "Global", "mpi_load_balance"), 2.0/3, effTol)
		})
	}
}

// TestThreadChurn: 5 000 short-lived threads calling MPI: every call kept,
// thread slots reused.
func TestThreadChurn(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			file, so, se, code := runPopmon(t, []string{"OMPI_MCA_mpi_yield_when_idle=1"}, nil,
				append(launch(impl, 2), filepath.Join(dir, "thread_churn"), "5000", "4")...)
			if code != 0 || !strings.Contains(so, "ok 10000") {
				t.Fatalf("exit %d, stdout %q\n%s", code, so, se)
			}
			m := readChecked(t, file)
			calls := map[string]int64{}
			for _, c := range m.MPICalls {
				calls[c.Name] = c.Calls
			}
			if calls["MPI_Comm_size"] != 2*5000+2 || calls["MPI_Comm_rank"] != 2*5000+2 {
				t.Errorf("calls %v, want 10002 MPI_Comm_size and MPI_Comm_rank: every call of 5 000 threads per rank", calls)
			}
			for _, p := range m.Processes {
				if p.CPUs > 1+4 {
					t.Errorf("rank %d: %d CPUs: thread slots not reused (at most 4 threads live at once)", p.Rank, p.CPUs)
				}
			}
		})
	}
}

// TestWrongMPI: a library is never used with another MPI than its own.
func TestWrongMPI(t *testing.T) {
	ims := impls(t)
	if len(ims) < 2 {
		t.Skip("needs both Open MPI and MPICH")
	}
	for i, impl := range ims {
		other := ims[1-i]
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			prog := filepath.Join(dir, "imbalance")
			// popmon run builds for the launcher's MPI by itself ...
			_, so, se, code := runPopmon(t, []string{"POPMON_MPICC=" + other.mpicc}, nil, append(launch(impl, 2), prog, "50", "2")...)
			if code != 4 || !strings.Contains(se, "builds the measurement library for") {
				// POPMON_MPICC names the other MPI: refused before the launch.
				t.Errorf("POPMON_MPICC of the other MPI: exit %d\n%s%s", code, so, se)
			}
			file, so, se, code := runPopmon(t, []string{"POPMON_MPICC="}, nil, append(launch(impl, 2), prog, "50", "2")...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, so, se)
			}
			near(t, "load balance", value(t, compute(t, readChecked(t, file), pop.ModelTALP), "Global", "mpi_load_balance"), 0.75, effTol)

			// ... and a library of the other MPI, loaded anyway, stays inert:
			// C and Fortran programs run unchanged, one line says why.
			lib, se2, code := popmon(t, nil, "build", "--mpicc", other.mpicc)
			if code != 0 {
				t.Fatalf("build: %s", se2)
			}
			for _, p := range []string{"imbalance", "imbalance_f", "imbalance_f08"} {
				if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
					continue
				}
				argv := append(launch(impl, 2), "env", "LD_PRELOAD="+strings.TrimSpace(lib), filepath.Join(dir, p), "50", "2")
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				err := cmd.Run()
				cancel()
				if err != nil || !strings.Contains(out.String(), "ok ") {
					t.Errorf("%s with the %s library: %v\nstdout %q\nstderr:\n%s", p, other.name, err, out.String(), errb.String())
				}
				if n := strings.Count(errb.String(), "popmon: the program uses the MPI library"); n != 1 {
					t.Errorf("%s: %d popmon lines, want 1:\n%s", p, n, errb.String())
				}
			}
		})
	}
}

// TestPartialPreload: ranks without the library never make the job hang;
// the measurement of the other ranks says which were missing and shows no
// tree; when rank 0 lacks it, no measurement and the explanation.
func TestPartialPreload(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			script := filepath.Join(t.TempDir(), "drop.sh")
			os.WriteFile(script, []byte(`#!/bin/sh
# Unsets LD_PRELOAD in the ranks listed in $DROP_RANKS.
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
for d in $DROP_RANKS; do [ "$r" = "$d" ] && unset LD_PRELOAD; done
exec "$@"
`), 0o755)
			argv := append(launch(impl, 4), script, filepath.Join(dir, "imbalance"), "50", "2")
			start := time.Now()
			file, so, se, code := runPopmon(t, []string{"DROP_RANKS=1 3"}, nil, argv...)
			if code != 0 || !strings.Contains(so, "ok ") {
				t.Fatalf("exit %d after %v\n%s%s", code, time.Since(start), so, se)
			}
			m := readChecked(t, file)
			if m.Version != 2 || m.Incomplete == nil || m.Incomplete.MissingRanks != "1,3" || m.Incomplete.Processes != 4 || len(m.Processes) != 2 {
				t.Fatalf("version %d, incomplete %+v, %d processes", m.Version, m.Incomplete, len(m.Processes))
			}
			out, _, rc := popmon(t, nil, "report", file)
			if rc != 3 || !strings.Contains(out, "No POP metrics: popmon measured 2 of the job's 4 processes: the measurement library did not reach ranks 1,3 of 4") {
				t.Errorf("report (exit %d):\n%s", rc, out)
			}

			// Rank 0 without the library: nothing written, the reason said.
			file, so, se, code = runPopmon(t, []string{"DROP_RANKS=0"}, nil, argv...)
			if code != 0 || !strings.Contains(so, "ok ") {
				t.Fatalf("rank 0 dropped: exit %d\n%s%s", code, so, se)
			}
			if _, err := os.Stat(file); err == nil {
				t.Error("a measurement without rank 0")
			}
			if !strings.Contains(se, "rank 0 did not take part in popmon's finalize") || !strings.Contains(se, "(ranks 1-3)") {
				t.Errorf("no explanation:\n%s", se)
			}
		})
	}
}

// TestFinalizeSkewAligned: ranks finishing at different times (no barrier
// before MPI_Finalize) wait inside MPI_Finalize: that is MPI time, not
// nothing, so the designed load balance shows.
func TestFinalizeSkewAligned(t *testing.T) {
	forEach(t, func(t *testing.T, impl mpiImpl, np int) {
		k := "200"
		if busyWaitOversubscribed(impl, np) {
			k = "400"
		}
		r := measureRun(t, impl, np, "finalize_skew", k)
		readChecked(t, r.file)
		lb := float64(np+1) / float64(2*np)
		r.expect(t, "Global", "mpi_load_balance", lb, effTol)
		r.expect(t, "Global", "parallel_efficiency", lb, effTol)
		r.expect(t, "Global", "mpi_communication_efficiency", 1, effTol)
		if a := r.m.GlobalAlignment; a == nil || float64(a.EndSkewNS) < 0.9*float64(np-1)*200e6 {
			t.Errorf("global_alignment %+v: the ranks entered MPI_Finalize (P-1)×K apart", a)
		}
	})
}

// TestRegionNames: "all", an anonymous region next to a user region named
// like one, and a name cut at 127 bytes are four distinct regions.
func TestRegionNames(t *testing.T) {
	for _, impl := range impls(t) {
		impl := impl
		t.Run(impl.name, func(t *testing.T) {
			r := measureRun(t, impl, 2, "region_names", "50")
			readChecked(t, r.file)
			long := strings.Repeat("é", 63)
			for _, c := range []struct {
				name string
				ms   float64
			}{{"all", 50}, {"Anonymous Region 2", 100}, {"Anonymous Region 1", 150}, {long, 200}} {
				g, ok := r.m.Region(c.name)
				if !ok || g.Name != c.name {
					t.Errorf("no region %q (have %v)", c.name, r.m.RegionNames())
					continue
				}
				for _, p := range g.Processes {
					if e := float64(p.ElapsedNS) / 1e6; e < c.ms*0.9 || e > c.ms*1.1+5 {
						t.Errorf("%q: rank %d elapsed %.0f ms, want %.0f: merged with another region?", c.name, p.Rank, e, c.ms)
					}
				}
			}
			if g, _ := r.m.Global(); g.Processes[0].Visits != 1 {
				t.Errorf("Global visited %d times: a region was aliased to it", g.Processes[0].Visits)
			}
		})
	}
}

// TestLatin1CommandLine: a program whose name is not UTF-8 gets a valid
// measurement file.
func TestLatin1CommandLine(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	prog := filepath.Join(t.TempDir(), "caf\xe9")
	b, err := os.ReadFile(filepath.Join(dir, "serial"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(prog, b, 0o755)
	file, so, se, code := runPopmon(t, nil, []string{"--mpicc", impl.mpicc}, prog, "50")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	m := readChecked(t, file)
	if len(m.Command) == 0 || !strings.HasSuffix(m.Command[0], "café") {
		t.Errorf("command %q, want the Latin-1 byte as é", m.Command)
	}
}

// TestRunOutputNeverOverwritten: -o FILE is refused when FILE exists,
// unless --force; default names are numbered.
func TestRunOutputNeverOverwritten(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	out := filepath.Join(t.TempDir(), "two.json")
	os.WriteFile(out, []byte("precious"), 0o644)
	_, se, code := popmon(t, nil, "run", "-o", out, "--", filepath.Join(dir, "serial"), "10")
	if code != 2 || !strings.Contains(se, out+" exists: choose another name or pass --force") {
		t.Errorf("exit %d:\n%s", code, se)
	}
	if b, _ := os.ReadFile(out); string(b) != "precious" {
		t.Fatal("the existing file was changed")
	}
	_, se, code = popmon(t, nil, "run", "--format", "none", "--force", "-o", out, "--", filepath.Join(dir, "serial"), "10")
	if code != 0 {
		t.Fatalf("--force: exit %d\n%s", code, se)
	}
	readChecked(t, out)
	// Default names: popmon-serial-DATE.json, then .1.json, .2.json.
	work := t.TempDir()
	for i := 0; i < 3; i++ {
		cmd := exec.Command(popmonBin, "run", "--format", "none", "--", filepath.Join(dir, "serial"), "10")
		cmd.Dir = work
		cmd.Env = os.Environ()
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
	}
	names, _ := filepath.Glob(filepath.Join(work, "popmon-serial-*.json"))
	var stems []string
	for _, n := range names {
		stems = append(stems, strings.TrimPrefix(filepath.Base(n), "popmon-serial-"))
	}
	if len(names) != 3 || strings.Contains(strings.Join(stems, " "), ".1.1.") {
		t.Errorf("default names %v", stems)
	}
}

// TestSignalForwarded: SIGTERM sent to popmon reaches the job, and popmon
// ends the way the job did.
func TestSignalForwarded(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	cmd := exec.Command(popmonBin, "run", "--format", "none", "-o", filepath.Join(t.TempDir(), "s.json"), "--", filepath.Join(dir, "serial"), "20000")
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // the library is built and the program runs
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		ee, ok := err.(*exec.ExitError)
		ws, _ := ee.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Errorf("popmon ended with %v, want killed by SIGTERM as the job was\n%s", err, se.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the job did not end: SIGTERM was not passed on")
	}
}

// TestOpenMPAutoThroughPATH: the application behind mpirun named without a
// path, its libgomp pulled in by one of its shared libraries: OpenMP is
// measured on libgomp in place (no libomp preloaded), and no per-rank
// advice is printed.
func TestOpenMPAutoThroughPATH(t *testing.T) {
	impl := impls(t)[0]
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	bin := t.TempDir()
	lib := filepath.Join(bin, "libompwork.so")
	src := filepath.Join(bin, "w.c")
	os.WriteFile(src, []byte(`#include <omp.h>
#include <time.h>
void ompwork(int ms) {
#pragma omp parallel
	{ struct timespec t = {0, ms * 1000000L}; nanosleep(&t, 0); }
}
`), 0o644)
	if b, err := exec.Command("gcc", "-O2", "-fopenmp", "-fPIC", "-shared", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	main := filepath.Join(bin, "m.c")
	os.WriteFile(main, []byte(`#include <mpi.h>
#include <stdio.h>
void ompwork(int ms);
int main(int c, char **v) { MPI_Init(&c, &v); ompwork(200); MPI_Barrier(MPI_COMM_WORLD); printf("ok\n"); MPI_Finalize(); return 0; }
`), 0o644)
	app := filepath.Join(bin, "ompapp")
	if b, err := exec.Command(impl.mpicc, "-O2", "-o", app, main, "-L"+bin, "-lompwork", "-Wl,-rpath,"+bin).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive"}
	file, so, se, code := runPopmon(t, env, []string{"--mpicc", impl.mpicc}, append(launch(impl, 2), "ompapp")...)
	if code != 0 || !strings.Contains(so, "ok") {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	m := readChecked(t, file)
	if m.OpenMP == nil || !m.OpenMP.OMPT || m.OpenMP.Runtime != "GNU libgomp" || m.OpenMP.Method != "GOMP interposition" {
		t.Fatalf("OpenMP not measured on libgomp in place: %+v\n%s", m.OpenMP, se)
	}
	for _, p := range m.Processes {
		if p.CPUs != 2 {
			t.Errorf("rank %d: %d CPUs, want 2", p.Rank, p.CPUs)
		}
	}
	if strings.Contains(se, "OMPT") || strings.Contains(se, "apt-get install") || strings.Contains(se, "libomp") {
		t.Errorf("advice printed although libgomp is measured in place:\n%s", se)
	}
}

// GNU libgomp is measured in place (--openmp=native is auto): no advice to
// install or preload anything, and none with --openmp=off.
func TestOpenMPAdviceOnce(t *testing.T) {
	impl := impls(t)[0]
	dir := examples(t, impl)
	prog := filepath.Join(dir, "hybrid_mpi_idle.gcc")
	if _, err := os.Stat(prog); err != nil {
		t.Skip("hybrid_mpi_idle.gcc not built")
	}
	argv := append(launch(impl, 2), prog, "50", "1")
	env := []string{"OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive"}
	_, _, se, code := runPopmon(t, env, []string{"--openmp", "native"}, argv...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, se)
	}
	if strings.Contains(se, "OMPT") || strings.Contains(se, "libomp") || strings.Contains(se, "not measured") {
		t.Errorf("--openmp=native: advice printed although libgomp is measured in place:\n%s", se)
	}
	_, _, se, code = runPopmon(t, env, []string{"--openmp", "off"}, argv...)
	if code != 0 || strings.Contains(se, "OMPT") || strings.Contains(se, "libomp") {
		t.Errorf("--openmp=off: exit %d, advice:\n%s", code, se)
	}
}
