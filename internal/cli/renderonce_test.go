package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 33, item 2: no package below cli opens a measurement file twice in
// one command. popmon run printed its report from one read of the file and
// then reopened it to say why OpenMP was not measured
// (report.OpenMPEndNote's own decoder). The test runs showReport (popmon
// run's report and OpenMP line) and popmon report in a child process under
// strace and counts the opens of the measurement file: one per command,
// whatever the format.

// renderOnceEnv names the measurement file the child reports on, and
// renderOnceCmd what it runs: "run FORMAT" (showReport) or "report FORMAT".
const (
	renderOnceEnv = "POPMON_TEST_RENDER_ONCE_FILE"
	renderOnceCmd = "POPMON_TEST_RENDER_ONCE_CMD"
)

// TestRenderOnceChild is the child: it does nothing unless the parent
// test started it.
func TestRenderOnceChild(t *testing.T) {
	path := os.Getenv(renderOnceEnv)
	if path == "" {
		t.Skip("run by TestMeasurementOpenedOnce")
	}
	cmd, format, _ := strings.Cut(os.Getenv(renderOnceCmd), " ")
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb}
	switch cmd {
	case "run":
		showReport(env, path, format, "talp")
	case "report":
		Main([]string{"report", "--format", format, path}, env)
	}
	os.Stdout.Write(errb.Bytes())
}

func TestMeasurementOpenedOnce(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("no strace (scripts/install-deps.sh installs it)")
	}
	dir := t.TempDir()
	// GNU libgomp without OMPT: popmon run's formats other than text and
	// json say so in a line of their own.
	data, err := os.ReadFile(filepath.Join("..", "..", "measure", "testdata", "gomp_library.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "measured-once.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const note = "popmon: OpenMP metrics not measured: GNU libgomp"
	for _, c := range []struct {
		cmd      string
		wantNote bool
	}{
		{"run csv", true},
		{"run none", true},
		{"run talp-json", true},
		{"run text", false},
		{"run json", false},
		{"report text", false},
		{"report json", false},
		{"report omp-regions-csv", false},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			trace := filepath.Join(dir, "strace.log")
			child := exec.Command(strace, "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", trace,
				self, "-test.run", "^TestRenderOnceChild$", "-test.count=1")
			child.Env = append(os.Environ(), renderOnceEnv+"="+path, renderOnceCmd+"="+c.cmd)
			done := make(chan struct{})
			var out []byte
			var err error
			go func() { out, err = child.CombinedOutput(); close(done) }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				child.Process.Kill()
				<-done
				t.Fatal("the child did not end in 60 s")
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got := strings.Contains(string(out), note); got != c.wantNote {
				t.Errorf("OpenMP line printed: %v, want %v:\n%s", got, c.wantNote, out)
			}
			log, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			opens := 0
			for _, line := range strings.Split(string(log), "\n") {
				if strings.Contains(line, `"`+path+`"`) && !strings.Contains(line, "ENOENT") {
					opens++
				}
			}
			if opens != 1 {
				t.Errorf("the measurement was opened %d times, want once:\n%s", opens, log)
			}
		})
	}
}
