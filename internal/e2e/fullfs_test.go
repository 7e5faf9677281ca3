package e2e

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Issue 21, item 8: a full file system used to lose the measurement: the
// library said "No space left on device", popmon printed the generic "did
// the program call MPI_Finalize?", removed the live files and exited 0. Now
// the measurement is kept where there is room, popmon names the place and
// exits 5 (ExitNotWritten), or with the job's own code when the job failed.

// fullFolder mounts a 64 KiB tmpfs on a new folder and fills it: no byte is
// left for a measurement. Skipped where mounting is not permitted (not
// root, no CAP_SYS_ADMIN).
func fullFolder(t *testing.T) string {
	t.Helper()
	dir := smallFolder(t)
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 4096)
	for {
		if _, err = f.Write(block); err != nil {
			break
		}
	}
	f.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling %s: %v, want no space left", dir, err)
	}
	return dir
}

var keptLine = regexp.MustCompile(`popmon: cannot write (\S+): no space left on device; the measurement was kept in (\S+) \(move it there with mv once there is room\)`)

// keptFile returns the file popmon run's last line says it kept the
// measurement of target in, failing when no line says so; the file is
// removed when the test ends (it is in /dev/shm, which other runs share).
func keptFile(t *testing.T, stderr, target string) string {
	t.Helper()
	m := keptLine.FindAllStringSubmatch(stderr, -1)
	if len(m) != 1 || m[0][1] != target {
		t.Fatalf("popmon run did not say once where it kept the measurement of %s:\n%s", target, stderr)
	}
	kept := m[0][2]
	t.Cleanup(func() { os.Remove(kept) })
	if !strings.HasPrefix(filepath.Base(kept), "popmon-kept-") {
		t.Errorf("kept as %s, want a popmon-kept-* name", kept)
	}
	return kept
}

// TestFullFileSystemKeepsMeasurement: popmon run -o FULL/m.json of an MPI
// job that finished. The library cannot write into the session folder next
// to m.json; it keeps the measurement in the private folder of the live
// files (/dev/shm/popmon-UID) and says so; popmon run cannot move it to
// m.json either, leaves it there, names it and exits 5. The kept file is
// the whole measurement (every rank, the designed load balance).
func TestFullFileSystemKeepsMeasurement(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			full := fullFolder(t)
			out := filepath.Join(full, "m.json")
			argv := append(launch(impl, 2), filepath.Join(dir, "imbalance"), "50", "4")
			_, se, code := popmon(t, nil, append([]string{"run", "--format", "none", "--mpicc", impl.mpicc, "-o", out, "--"}, argv...)...)
			if code != 5 {
				t.Errorf("exit %d, want 5 (the measurement could not be written where asked)\n%s", code, se)
			}
			if strings.Contains(se, "did the program call MPI_Finalize") || strings.Contains(se, "no measurement was written") {
				t.Errorf("popmon run said nothing was measured:\n%s", se)
			}
			kept := keptFile(t, se, out)
			// The library's own line, naming the same file.
			if !strings.Contains(se, "No space left on device; the measurement was kept in "+kept) {
				t.Errorf("the library did not say where it kept the measurement:\n%s", se)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s exists on a full file system", out)
			}
			m := readChecked(t, kept)
			if len(m.Processes) != 2 || m.MPI == nil || m.Partial != nil {
				t.Errorf("kept measurement: %d processes, MPI %v, partial %v; want the whole MPI job of 2", len(m.Processes), m.MPI != nil, m.Partial != nil)
			}
			g, _ := m.Global()
			if g == nil || len(g.Processes) != 2 || g.Processes[0].ElapsedNS <= 0 {
				t.Fatalf("kept measurement without the Global region of 2 processes: %+v", g)
			}
			rep := compute(t, m, pop.ModelTALP)
			near(t, "kept measurement's load balance", value(t, rep, "Global", "mpi_load_balance"), 0.75, effTol)
			// Nothing else left behind: the session folder went, and the
			// live folder too (the kept file is outside it).
			if left, _ := filepath.Glob(filepath.Join(full, ".popmon-session-*")); len(left) != 0 {
				t.Errorf("session folder left on the full file system: %v", left)
			}
			if strings.Contains(filepath.Base(filepath.Dir(kept)), "run-") {
				t.Errorf("kept in the live folder %s, which popmon run removes", filepath.Dir(kept))
			}
		})
	}
}

// TestFullFileSystemKeepsPartial: the same full file system for a job
// whose ranks are killed mid-run: the partial measurement popmon run
// assembles from the live files is kept where there is room and named;
// the job's own exit code wins over 5.
func TestFullFileSystemKeepsPartial(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			full := fullFolder(t)
			np := partialRanks(impl)
			s := &started{out: filepath.Join(full, "p.json")}
			argv := append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", s.out, "--"}, launch(impl, np)...)
			argv = append(argv, filepath.Join(dir, "imbalance"), fmt.Sprint(partialK), "200")
			s.start(t, argv, nil, np, "imbalance")
			time.Sleep(2500 * time.Millisecond)
			for _, pid := range s.ranks {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			ws := s.wait(t)
			se := s.se.String()
			if ws.ExitStatus() == 0 || ws.ExitStatus() == 5 {
				t.Errorf("exit %d, want the killed job's own code\n%s", ws.ExitStatus(), se)
			}
			kept := keptFile(t, se, s.out)
			m := readChecked(t, kept)
			if m.Partial == nil || m.Partial.Reason != measure.PartialKilled || len(m.Processes) != np {
				t.Fatalf("kept measurement: partial %+v, %d processes; want the killed job's %d", m.Partial, len(m.Processes), np)
			}
			rep := compute(t, m, pop.ModelTALP)
			lb := float64(np+1) / float64(2*np)
			if v := value(t, rep, "Global", "mpi_load_balance"); math.Abs(v-lb) > 0.03 {
				t.Errorf("kept partial measurement's load balance %.3f, want %.3f ± 0.03", v, lb)
			}
		})
	}
}

// TestFullFileSystemExec: without popmon run (popmon exec per rank), the
// library alone keeps the measurement in $TMPDIR and says where.
func TestFullFileSystemExec(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			dir := examples(t, impl)
			full := fullFolder(t)
			tmp := t.TempDir()
			out := filepath.Join(full, "exec.json")
			argv := append(append(append([]string{}, impl.mpirun), impl.extra...), "-np", "2", popmonBin, "exec", "--mpicc", impl.mpicc,
				"-o", out, "--", filepath.Join(dir, "imbalance"), "50", "4")
			_, se, code := runCommand(t, 3*time.Minute, []string{"TMPDIR=" + tmp}, argv...)
			if code != 0 {
				t.Errorf("exit %d\n%s", code, se)
			}
			kept := filepath.Join(tmp, "popmon-kept-exec.json")
			want := "popmon: cannot write the measurement file " + out + ": No space left on device; the measurement was kept in " + kept
			if !strings.Contains(se, want) {
				t.Fatalf("no line %q:\n%s", want, se)
			}
			m := readChecked(t, kept)
			rep := compute(t, m, pop.ModelTALP)
			near(t, "kept measurement's load balance", value(t, rep, "Global", "mpi_load_balance"), 0.75, effTol)
		})
	}
}
