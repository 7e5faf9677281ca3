package e2e

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/popmon/popmon/internal/drom"
)

// Issue 34: DLB's DROM and LeWI calls from Python (`import dlb`, DLB's
// bindings) reach popmon's library: examples/python/drom.py, a script
// written for DLB's module, under popmon run / exec with --drom and --lewi
// (docs/python.md).

// dromPyLines runs examples/python/drom.py MODE with argv's popmon prefix
// and returns its outcome lines (first word → the rest).
func dromPyLines(t *testing.T, env []string, prefix []string, mode string) map[string]string {
	t.Helper()
	argv := append(append(append([]string{}, prefix...), pythonBin(t), pyScript("drom.py")), mode)
	so, se, code := runCommand(t, timeoutPython, append(append([]string{}, pyEnv...), env...), argv...)
	if code != 0 || !strings.HasSuffix(so, "\nok\n") {
		t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), code, so, se)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(so), "\n") {
		k, v, _ := strings.Cut(l, " ")
		lines[k] = v
	}
	return lines
}

func wantLines(t *testing.T, what string, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s %q, want %q", what, k, got[k], v)
		}
	}
}

// dlbMask is DLB's string of the sorted CPUs cpus as its mask utilities
// write it (the Python module's DLB_ParseMaskToStr, without brackets): a
// run of three or more as a range, of two as a pair ("0,1", "0-3,5").
func dlbMask(cpus ...int) string {
	var out []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		switch j - i {
		case 0:
			out = append(out, strconv.Itoa(cpus[i]))
		case 1:
			out = append(out, fmt.Sprintf("%d,%d", cpus[i], cpus[j]))
		default:
			out = append(out, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(out, ",")
}

// tasksetMask is popmon taskset's string of cpus.
func tasksetMask(cpus ...int) string {
	var m drom.Mask
	for _, c := range cpus {
		m.Set(c)
	}
	return m.String()
}

// TestPythonDROMSelf: drom.py's DLB_DROM_* calls on its own pid under
// `popmon run --drom` and `popmon exec --drom`: DLB_DROM_GetNumCpus is the
// node's CPUs, DLB_DROM_GetPidList has the process, DLB_DROM_GetProcessMask
// its affinity, and each DLB_DROM_SetProcessMask (a mask string, a list of
// CPUs) and SetProcessMaskStr ("0x1") reads back as set, in DLB's form,
// with the process's affinity moved there; DLB_PollDROM after its own
// change warns DLB_NOUPDT. Without popmon's library every DROM call raises
// DLBError saying why, and the script still ends.
func TestPythonDROMSelf(t *testing.T) {
	cpus := mustAffinity(t)
	if len(cpus) < 2 {
		t.Skipf("needs 2 CPUs, this process has %d", len(cpus))
	}
	nodeCPUs := 0
	if ents, err := filepath.Glob("/sys/devices/system/cpu/cpu[0-9]*"); err == nil {
		nodeCPUs = len(ents)
	}
	all, first, last := dlbMask(cpus...), dlbMask(cpus[0]), dlbMask(cpus[len(cpus)-1])
	want := map[string]string{
		"init": "ok", "attach": "ok", "pidlist": "ok listed 1",
		"mask":    "ok " + all + " affinity " + all,
		"set":     "ok " + last + " affinity " + last,
		"setlist": "ok " + all + " affinity " + all,
		"setstr":  "ok " + first + " affinity " + first,
		"poll":    "warn DLB_NOUPDT", "detach": "ok", "finalize": "ok",
	}
	for _, c := range []struct {
		name   string
		prefix func(out string) []string
	}{
		{"run", func(out string) []string {
			return []string{popmonBin, "run", "--no-mpi", "--drom", "--format", "none", "-o", out, "--"}
		}},
		{"exec", func(out string) []string { return []string{popmonBin, "exec", "--no-mpi", "--drom", "-o", out, "--"} }},
		// No --drom: the script's DLB_Init(0, "", "--drom") turns DROM on,
		// as DLB's options there do.
		{"init-args", func(out string) []string {
			return []string{popmonBin, "run", "--no-mpi", "--format", "none", "-o", out, "--"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := dromPyLines(t, dromKey(t), c.prefix(filepath.Join(t.TempDir(), "m.json")), "self")
			wantLines(t, "drom.py self", got, want)
			f := strings.Fields(got["numcpus"])
			if n, err := strconv.Atoi(f[len(f)-1]); f[0] != "ok" || err != nil || n < len(cpus) || (nodeCPUs > 0 && n != nodeCPUs) {
				t.Errorf("DLB_DROM_GetNumCpus: %q, want ok and the node's %d CPUs", got["numcpus"], nodeCPUs)
			}
		})
	}

	t.Run("without popmon", func(t *testing.T) {
		env := []string{"PYTHONPATH=" + filepath.Join(repoRoot, "python"), "LD_PRELOAD="}
		got := dromPyLines(t, env, nil, "self")
		wantLines(t, "drom.py self without popmon", got, map[string]string{
			"init": "ok", "numcpus": "error DLB_ERR_NOSHMEM None", "attach": "error DLB_ERR_NOSHMEM",
			"set": "error DLB_ERR_NOSHMEM None affinity " + all, "poll": "error DLB_ERR_NOCOMP", "finalize": "ok",
		})
		so, se, code := runCommand(t, timeoutPython, append(env, pyEnv...), pythonBin(t), "-c", "import dlb; dlb.DLB_DROM_SetProcessMask(0, '0', 0)")
		if code == 0 || !strings.Contains(se, "dlb.DLBError: DLB_DROM_SetProcessMask: DLB_ERR_NOSHMEM (-5)") ||
			!strings.Contains(se, "popmon's library is not loaded in this process") || strings.Contains(se, "Segmentation") {
			t.Errorf("DLB_DROM_SetProcessMask without popmon: exit %d, want DLBError saying the library is not loaded\n%s%s", code, so, se)
		}
	})
}

// TestPythonDROMPoll: another process changes the Python process's CPUs
// (`popmon taskset -p PID -c LIST`) and the script sees it through DLB's
// calls: DLB_PollDROM returns the new number of CPUs and the mask (in DLB's
// form through DLB_ParseMaskToStr) without applying it, and after a second
// change DLB_PollDROM_Update applies it (the process's affinity).
func TestPythonDROMPoll(t *testing.T) {
	cpus := mustAffinity(t)
	if len(cpus) < 2 {
		t.Skipf("needs 2 CPUs, this process has %d", len(cpus))
	}
	all, last := dlbMask(cpus...), dlbMask(cpus[len(cpus)-1])
	tAll := tasksetMask(cpus...)
	env := dromKey(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, popmonBin, "run", "--no-mpi", "--drom", "--format", "none",
		"-o", filepath.Join(t.TempDir(), "m.json"), "--", pythonBin(t), pyScript("drom.py"), "poll")
	cmd.Env = append(append(os.Environ(), pyEnv...), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(word string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("drom.py poll ended before its %q line\nstderr:\n%s", word, stderr.String())
				}
				if k, v, _ := strings.Cut(l, " "); k == word {
					return v
				}
			case <-time.After(90 * time.Second):
				t.Fatalf("no %q line from drom.py poll within 90 s\nstderr:\n%s", word, stderr.String())
			}
		}
	}
	pid := next("ready")
	if so, se, code := popmon(t, env, "taskset", "-p", pid, "-c", last); code != 0 || !strings.Contains(so, "affinity set to: "+last+"\n") {
		t.Fatalf("popmon taskset -p %s -c %s: exit %d\n%s%s", pid, last, code, so, se)
	}
	if got, want := next("polled"), fmt.Sprintf("ok ncpus 1 mask %s affinity %s", last, all); got != want {
		t.Errorf("DLB_PollDROM after popmon taskset -c %s: %q, want %q", last, got, want)
	}
	if so, se, code := popmon(t, env, "taskset", "-p", pid, "-c", all); code != 0 || !strings.Contains(so, "affinity set to: "+tAll+"\n") {
		t.Fatalf("popmon taskset -p %s -c %s: exit %d\n%s%s", pid, all, code, so, se)
	}
	if got, want := next("updated"), "ok affinity "+all; got != want {
		t.Errorf("DLB_PollDROM_Update after popmon taskset -c %s: %q, want %q", all, got, want)
	}
	next("ok")
}

// TestPythonLeWI: drom.py's LeWI calls answer DLB's codes from popmon's
// library: without --lewi (neither popmon's nor in DLB_Init's options)
// every one raises DLBError DLB_ERR_NOLEWI; with `popmon run --lewi`, or
// --lewi in DLB_Init's options (DLB_Init registers the process's CPUs), DLB_Lend and
// DLB_Reclaim succeed, DLB_LendCpus is DLB_ERR_NOPOL (not in DLB's mask
// policy), a second DLB_Reclaim warns DLB_NOUPDT (nothing lent),
// DLB_LendCpu/AcquireCpu and the mask forms (a string, DLB_ParseMask's)
// succeed, DLB_Borrow with nothing lent warns DLB_NOUPDT, the maximum
// parallelism is set and unset; DLB_Barrier (the process alone in the
// node barrier DLB_Init joined) returns at once. Without popmon's library, DLBError saying why.
func TestPythonLeWI(t *testing.T) {
	cpus := mustAffinity(t)
	if len(cpus) < 2 {
		t.Skipf("needs 2 CPUs, this process has %d", len(cpus))
	}
	names := []string{"lend", "reclaim", "lendcpus", "reclaim_again", "lendcpu", "acquirecpu", "borrow",
		"return", "maxpar", "unsetmaxpar", "lendmask", "reclaimmask"}
	off := map[string]string{"init": "ok", "barrier": "error DLB_ERR_NOCOMP", "finalize": "ok"}
	for _, n := range names {
		off[n] = "error DLB_ERR_NOLEWI"
	}
	run := func(flag string) []string {
		p := []string{popmonBin, "run", "--no-mpi", "--format", "none", "-o", filepath.Join(t.TempDir(), "m.json")}
		if flag != "" {
			p = append(p, flag)
		}
		return append(p, "--")
	}
	on := map[string]string{
		"init": "ok", "lend": "ok", "reclaim": "ok", "lendcpus": "error DLB_ERR_NOPOL",
		"reclaim_again": "warn DLB_NOUPDT", "lendcpu": "ok", "acquirecpu": "ok", "borrow": "warn DLB_NOUPDT",
		"return": "warn DLB_NOUPDT", "maxpar": "ok", "unsetmaxpar": "ok", "lendmask": "ok", "reclaimmask": "ok",
		"barrier": "ok", "finalize": "ok",
	}
	t.Run("off", func(t *testing.T) {
		env := []string{"POPMON_LEWI_KEY=" + lewiKey(t), "DROM_PY_INIT_ARGS=--drom"}
		want := maps.Clone(off)
		want["barrier"] = "ok" // the node barrier (DLB_Init joins it), alone in it
		wantLines(t, "drom.py lewi without --lewi", dromPyLines(t, env, run(""), "lewi"), want)
	})
	t.Run("on", func(t *testing.T) {
		key := []string{"POPMON_LEWI_KEY=" + lewiKey(t)}
		wantLines(t, "drom.py lewi with --lewi", dromPyLines(t, key, run("--lewi"), "lewi"), on)
	})
	// No --lewi: DLB_Init(0, "", "--drom --lewi") turns LeWI on, as DLB's
	// options there do.
	t.Run("init-args", func(t *testing.T) {
		key := []string{"POPMON_LEWI_KEY=" + lewiKey(t)}
		wantLines(t, "drom.py lewi, --lewi in DLB_Init", dromPyLines(t, key, run(""), "lewi"), on)
	})
	t.Run("without popmon", func(t *testing.T) {
		env := []string{"PYTHONPATH=" + filepath.Join(repoRoot, "python"), "LD_PRELOAD="}
		wantLines(t, "drom.py lewi without popmon", dromPyLines(t, env, nil, "lewi"), off)
		so, se, code := runCommand(t, timeoutPython, append(env, pyEnv...), pythonBin(t), "-c", "import dlb; dlb.DLB_Lend()")
		if code == 0 || !strings.Contains(se, "dlb.DLBError: DLB_Lend: DLB_ERR_NOLEWI (-17)") || !strings.Contains(se, "popmon's library is not loaded") {
			t.Errorf("DLB_Lend without popmon: exit %d, want DLBError saying the library is not loaded\n%s%s", code, so, se)
		}
	})
}

// TestPythonDLBMasks: DLB_ParseMask and DLB_ParseMaskToStr (no library
// needed) read DLB's mask forms and write DLB's string of a mask (runs of
// three or more as ranges, pairs as two CPUs); a string in none of the
// forms gives the empty mask, as DLB's mask utilities do.
func TestPythonDLBMasks(t *testing.T) {
	cases := []struct{ in, want string }{
		{"2,4", "[2,4]"}, {"1-4", "[1-4]"}, {"0,1", "[0,1]"}, {"0-2,5,7-8", "[0-2,5,7,8]"},
		{"0xE1", "[0,5-7]"}, {"0b11100001", "[0,5-7]"}, {"11100001b", "[0-2,7]"}, {"1023", "[1023]"},
		{"", "[]"}, {"x", "[]"}, {"3-1", "[]"}, {"1024", "[]"}, {"0-99999999", "[]"},
	}
	var prog strings.Builder
	prog.WriteString("import dlb\n")
	for _, c := range cases {
		fmt.Fprintf(&prog, "print(dlb.DLB_ParseMaskToStr(dlb.DLB_ParseMask(%q)))\n", c.in)
	}
	env := append([]string{"PYTHONPATH=" + filepath.Join(repoRoot, "python"), "LD_PRELOAD="}, pyEnv...)
	so, se, code := runCommand(t, timeoutPython, env, pythonBin(t), "-c", prog.String())
	got := strings.Split(strings.TrimSuffix(so, "\n"), "\n")
	if code != 0 || len(got) != len(cases) {
		t.Fatalf("exit %d, %d lines for %d masks\nstdout:\n%s\nstderr:\n%s", code, len(got), len(cases), so, se)
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("DLB_ParseMaskToStr(DLB_ParseMask(%q)) = %q, want %q", c.in, got[i], c.want)
		}
	}
}
