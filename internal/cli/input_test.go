package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/runs"
)

// popmonRun is a valid two-rank measurement of 1 s whose rank 1 is
// useful for useful1 ns and in MPI for the rest: Global's parallel
// efficiency is (1 s + useful1)/2 s. extra is appended to the regions
// array.
func popmonRun(useful1 string, extra string) string {
	mpi1 := "0"
	if u, err := strconv.ParseInt(useful1, 10, 64); err == nil && u >= 0 {
		mpi1 = strconv.FormatInt(1e9-u, 10)
	}
	return `{
  "format": "popmon-measurement", "version": 1,
  "tool": {"name": "popmon", "version": "0.1.0"},
  "timestamp": "2026-11-21T10:00:00Z",
  "command": ["./app"], "cwd": "/tmp",
  "launcher": {"kind": "openmpi"},
  "mpi": {"library": "Open MPI", "standard": "3.1", "thread_level": "single"},
  "clock": {"source": "monotonic"},
  "resources": {"processes": 2, "nodes": 1, "cpus": 2, "gpus": 0, "hardware_counters": false},
  "processes": [
    {"rank": 0, "node": 0, "hostname": "n1", "pid": 100, "cpus": 1},
    {"rank": 1, "node": 0, "hostname": "n1", "pid": 101, "cpus": 1}
  ],
  "regions": [
    {"name": "Global", "processes": [
      {"rank": 0, "cpus": 1, "visits": 1, "elapsed_ns": 1000000000, "useful_ns": 1000000000, "mpi_ns": 0, "mpi_calls": 1},
      {"rank": 1, "cpus": 1, "visits": 1, "elapsed_ns": 1000000000, "useful_ns": ` + useful1 + `, "mpi_ns": ` + mpi1 + `, "mpi_calls": 1}
    ]}` + extra + `
  ],
  "mpi_calls": [], "warnings": []
}`
}

// region returns a region entry for popmonRun's extra argument: 0.1 s,
// rank 1 useful for useful1 ns and in MPI for the rest.
func region(name string, useful1 int64) string {
	return fmt.Sprintf(`,
    {"name": %q, "processes": [
      {"rank": 0, "cpus": 1, "visits": 1, "elapsed_ns": 100000000, "useful_ns": 100000000, "mpi_ns": 0, "mpi_calls": 1},
      {"rank": 1, "cpus": 1, "visits": 1, "elapsed_ns": 100000000, "useful_ns": %d, "mpi_ns": %d, "mpi_calls": 1}
    ]}`, name, useful1, 100000000-useful1)
}

// tinyTrace is a plain two-rank Paraver trace (running, then MPI).
const tinyTrace = `#Paraver (21/11/2026 at 10:00):1000_ns:1(2):1:2(1:1,1:1),0
1:1:1:1:1:0:600:1
1:2:1:2:1:0:300:1
2:2:1:2:1:300:50000002:10
1:2:1:2:1:300:900:13
1:1:1:1:1:600:900:13
2:1:1:1:1:600:50000002:10
2:1:1:1:1:900:50000002:0
1:1:1:1:1:900:1000:1
2:2:1:2:1:900:50000002:0
1:2:1:2:1:900:1000:1
`

// inputCase is one file for the commands that read runs.
type inputCase struct {
	name    string
	content string // written as the file, unless dir
	dir     bool   // the file is a symbolic link to a directory
	ok      bool   // every command accepts it
	problem string // the rejection names this problem
	// skipped starts the warning of a file that --skip-bad reads anyway
	// (a truncated trace: what is there is imported, with a warning that
	// names the file).
	skipped string
}

func inputCases() []inputCase {
	return []inputCase{
		{name: "popmon measurement", content: popmonRun("800000000", ""), ok: true},
		{name: "DLB/TALP file", content: `{"dlbVersion": "3.7", "timestamp": "2026-01-01T00:00:00",
 "resources": {"numCpus": 2, "numNodes": 1, "numMpiRanks": 2},
 "Application": {"Global": {"numCpus": 2, "numMpiRanks": 2, "numNodes": 1, "elapsedTime": 1000000000, "usefulTime": 1800000000,
   "mpiTime": 200000000, "parallelEfficiency": 0.9, "mpiParallelEfficiency": 0.9, "mpiCommunicationEfficiency": 1.0, "mpiLoadBalance": 0.9}}}`, ok: true},
		{name: "trace", content: tinyTrace, ok: true},
		{name: "bad JSON", content: `{"format": "popmon-measurement", "version": 1, "regions": [`, problem: "is not valid JSON (invalid JSON at byte"},
		{name: "wrong format key", content: `{"format": "other-tool", "version": 1}`, problem: `is not a popmon measurement (its "format" is "other-tool", not "popmon-measurement")`},
		{name: "newer version", content: `{"format": "popmon-measurement", "version": 99}`, problem: "is a measurement of format version 99, newer than this popmon reads"},
		{name: "negative times", content: popmonRun("-5", ""), problem: "is not a valid measurement (invalid measurement: regions[0] \"Global\": processes[1] has negative useful_ns (-5))"},
		{name: "negative TALP times", content: `{"dlbVersion": "3.7", "Application": {"Global": {"numCpus": 2, "numMpiRanks": 2, "elapsedTime": -3, "usefulTime": 1}}}`,
			problem: "is not a usable DLB/TALP JSON file (region \"Global\": elapsedTime is negative (-3))"},
		{name: "neither popmon nor TALP", content: `{"hello": 1}`, problem: "is neither a popmon measurement"},
		{name: "array", content: `[1, 2]`, problem: "its top level is not a JSON object"},
		{name: "empty file", content: "", problem: "is empty"},
		{name: "white space", content: " \n\t\n", problem: "holds only white space"},
		{name: "truncated trace", content: tinyTrace[:strings.Index(tinyTrace, "1:1:1:1:1:900")+9], problem: "is not a usable Paraver trace: line 9:", skipped: "run.json: "},
		{name: "header-only trace", content: tinyTrace[:strings.Index(tinyTrace, "\n")+1], problem: "is not a usable Paraver trace: "},
		{name: "directory", dir: true, problem: "is a directory, not a run file"},
	}
}

// writeCase writes c as dir/run.json (a trace is recognised by its first
// bytes whatever its name) and returns its path.
func writeCase(t *testing.T, dir string, c inputCase) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "run.json")
	if c.dir {
		target := filepath.Join(t.TempDir(), "somewhere")
		if err := os.Mkdir(target, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOneValidationPath: report, scaling, check (new run and baseline) and
// pages accept and refuse exactly the same files, with the same message:
// runs.Open's.
func TestOneValidationPath(t *testing.T) {
	root := t.TempDir()
	good := writeCase(t, filepath.Join(root, "good"), inputCases()[0])
	for i, c := range inputCases() {
		t.Run(c.name, func(t *testing.T) {
			folder := filepath.Join(root, fmt.Sprintf("case%02d", i))
			path := writeCase(t, folder, c)
			_, openErr := runs.Open(path, runs.ReadOptions{})
			if (openErr == nil) != c.ok {
				t.Fatalf("runs.Open: %v, want ok=%v", openErr, c.ok)
			}
			msg := ""
			if openErr != nil {
				var fe *runs.FileError
				if !errors.As(openErr, &fe) {
					t.Fatalf("runs.Open error %T %v is not a *runs.FileError", openErr, openErr)
				}
				msg = openErr.Error()
				if !strings.HasPrefix(msg, path+" ") || !strings.Contains(msg, c.problem) || strings.Count(msg, "\n") > 0 {
					t.Errorf("message %q: want one line naming %s and %q", msg, path, c.problem)
				}
				if fe.Fix == "" {
					t.Errorf("message %q says no fix", msg)
				}
			}
			site := filepath.Join(t.TempDir(), "site")
			commands := [][]string{
				{"report", path},
				{"scaling", folder},
				{"check", "--baseline", good, path},
				{"check", "--baseline", path, good},
				{"pages", "-i", folder, "-o", site},
			}
			for _, args := range commands {
				code, stdout, stderr := runMain(args...)
				accepted := code != ExitInput
				if accepted != c.ok {
					t.Errorf("%v: exit %d, want accepted=%v\n%s%s", args, code, c.ok, stdout, stderr)
					continue
				}
				if c.ok {
					if code != ExitOK && !(args[0] == "check" && code == ExitFailure) {
						t.Errorf("%v: exit %d\n%s", args, code, stderr)
					}
					continue
				}
				if !strings.Contains(stderr, msg) {
					t.Errorf("%v: stderr %q lacks runs.Open's message %q", args, stderr, msg)
				}
			}
		})
	}
}

// TestSkipBadEverywhere: --skip-bad leaves the same files out of scaling,
// pages and a check baseline directory, with the same warnings.
func TestSkipBadEverywhere(t *testing.T) {
	dir := t.TempDir()
	var bad, warned []string
	good := 0
	for i, c := range inputCases() {
		p := writeCase(t, filepath.Join(dir, fmt.Sprintf("case%02d", i)), c)
		if c.ok {
			good++
			continue
		}
		if c.skipped != "" {
			good++
			warned = append(warned, p[len(dir)+1:len(p)-len("run.json")]+c.skipped)
			continue
		}
		_, err := runs.Open(p, runs.ReadOptions{})
		if err == nil {
			t.Fatalf("%s: runs.Open accepted it", c.name)
		}
		bad = append(bad, err.Error())
	}
	newRun := writeCase(t, t.TempDir(), inputCases()[0])
	for _, args := range [][]string{
		{"scaling", "--skip-bad", "--format", "csv", dir},
		{"pages", "--skip-bad", "-i", dir, "-o", filepath.Join(t.TempDir(), "site")},
		{"check", "--skip-bad", "--baseline", dir, newRun},
	} {
		code, stdout, stderr := runMain(args...)
		if code != ExitOK {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
			continue
		}
		for _, msg := range bad {
			if !strings.Contains(stderr, "skipping "+msg) && !strings.Contains(stderr, "skipping: "+msg) {
				t.Errorf("%v: no warning %q in\n%s", args, msg, stderr)
			}
		}
		for _, msg := range warned {
			if !strings.Contains(stderr, "popmon "+args[0]+": "+dir+"/"+msg) {
				t.Errorf("%v: no warning %q in\n%s", args, msg, stderr)
			}
		}
		if args[0] == "pages" && !strings.Contains(stdout, fmt.Sprintf("%d run(s), %d bad file(s) skipped", good, len(bad))) {
			t.Errorf("pages: %s", stdout)
		}
	}
	// Without --skip-bad the folder is refused.
	for _, args := range [][]string{{"scaling", dir}, {"check", "--baseline", dir, newRun}} {
		if code, _, stderr := runMain(args...); code != ExitInput || !strings.Contains(stderr, "--skip-bad skips such files") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
