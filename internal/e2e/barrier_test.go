package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDLBBarrier: DLB's node barrier through DLB's own API
// (testdata/dlb_barrier.c built against `popmon dlb-home --no-mpi`'s
// dlb.h and libdlb.so, processes forked, DLB_ARGS=--shm-key=KEY):
//   - api: DLB's codes in one process (DLB_ERR_NOCOMP before DLB_Init,
//     after DLB_Finalize and with --no-barrier; DLB_ERR_PERM for a second
//     attach or detach and for a detached process's barrier; attach and
//     detach return the members; named barriers, a bad handle);
//   - wait 3 3: 3 processes, 3 barriers, process i arriving i×20 ms late:
//     nobody leaves before the last arrives, and the first leaves within
//     40 ms of it (woken, not found by the 50 ms sweep);
//   - dead 3: the third process registers and exits without arriving: the
//     other two pass the barrier within 2 s (its member is dropped when a
//     waiter finds it dead);
//   - named: processes 0 and 1 in "pair", 2 in "other" (sleeping 500 ms
//     first): "pair" completes without waiting for 2 (under 300 ms).
func TestDLBBarrier(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C programs")
	}
	_, bin := buildAgainstDLBHome(t, filepath.Join(repoRoot, "internal", "e2e", "testdata", "dlb_barrier.c"))
	key := fmt.Sprintf("e2e-barrier-%d", os.Getpid())
	t.Cleanup(func() { os.Remove(fmt.Sprintf("/dev/shm/popmon-barrier-%d-%s", os.Geteuid(), key)) })
	env := []string{"DLB_ARGS=--shm-key=" + key}
	run := func(t *testing.T, argv ...string) string {
		t.Helper()
		so, se, code := runCommand(t, 30*time.Second, env, append([]string{bin}, argv...)...)
		if code != 0 || !strings.HasSuffix(so, "ok\n") {
			t.Fatalf("dlb_barrier %s: exit %d\n%s%s", strings.Join(argv, " "), code, so, se)
		}
		if se != "" {
			t.Errorf("stderr not empty:\n%s", se)
		}
		return so
	}
	t.Run("api", func(t *testing.T) { run(t, "api") })
	t.Run("wait", func(t *testing.T) {
		so := run(t, "wait", "3", "3")
		ms := regexp.MustCompile(`(?m)^round (\d) last_arrival_ms ([0-9.]+) first_leave_ms ([0-9.]+)$`).FindAllStringSubmatch(so, -1)
		if len(ms) != 3 {
			t.Fatalf("output:\n%s", so)
		}
		for _, m := range ms {
			last, _ := strconv.ParseFloat(m[2], 64)
			first, _ := strconv.ParseFloat(m[3], 64)
			if first < last || first > last+40 {
				t.Errorf("round %s: the last process arrived at %.3f ms, the first left at %.3f ms; want leaving after the last arrival, within 40 ms", m[1], last, first)
			}
		}
	})
	t.Run("dead", func(t *testing.T) {
		so := run(t, "dead", "3")
		m := regexp.MustCompile(`(?m)^dead passed_ms ([0-9.]+)$`).FindStringSubmatch(so)
		if m == nil {
			t.Fatalf("output:\n%s", so)
		}
		if v, err := strconv.ParseFloat(m[1], 64); err != nil || v > 2000 {
			t.Errorf("with a dead member the barrier took %v ms; want under 2 s\n%s", m, so)
		}
	})
	t.Run("named", func(t *testing.T) {
		so := run(t, "named")
		m := regexp.MustCompile(`(?m)^named passed_ms ([0-9.]+)$`).FindStringSubmatch(so)
		if m == nil {
			t.Fatalf("output:\n%s", so)
		}
		if v, err := strconv.ParseFloat(m[1], 64); err != nil || v > 300 {
			t.Errorf("the named barrier of 2 took %v ms (the third process, in another barrier, sleeps 500 ms); want under 300 ms\n%s", m, so)
		}
	})
}

// TestDLBBarrierMPI: an MPI program that calls DLB_Barrier without
// DLB_Init (testdata/dlb_barrier_mpi.c), under `popmon run` with DLB_ARGS
// set (DLB's interface in use): MPI_Init joined both ranks to the node
// barrier, so rank 0 waits there for rank 1, which arrives 300 ms later
// (rank 0 waited 250 ms to 5 s), with both MPIs.
func TestDLBBarrierMPI(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			prog := buildMPI(t, impl, "dlb_barrier_mpi")
			key := fmt.Sprintf("e2e-barrier-mpi-%d-%s", os.Getpid(), impl.name)
			t.Cleanup(func() { os.Remove(fmt.Sprintf("/dev/shm/popmon-barrier-%d-%s", os.Geteuid(), key)) })
			_, so, se, code := runPopmon(t, []string{"DLB_ARGS=--shm-key=" + key}, nil, append(launch(impl, 2), prog)...)
			if code != 0 || !strings.HasSuffix(strings.TrimSpace(so), "ok") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
			}
			m := regexp.MustCompile(`(?m)^rank0_waited_ms ([0-9.]+)$`).FindStringSubmatch(so)
			if m == nil {
				t.Fatalf("output:\n%s", so)
			}
			if v, _ := strconv.ParseFloat(m[1], 64); v < 250 || v > 5000 {
				t.Errorf("rank 0 waited %.1f ms in DLB_Barrier; rank 1 came 300 ms later", v)
			}
		})
	}
}
