package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Issue 30, items 1 and 7: the ranks' environment is the one the same
// command line gives without popmon, plus popmon's own variables; and the
// per-rank form says once that a killed job keeps nothing.

// userTestScript is the user's own program called test (a name /usr/bin
// also has), first on PATH: each rank dumps its whole environment, the
// sys.executable of the python3 it finds on PATH, and its own name.
const userTestScript = `#!/bin/sh
r=${OMPI_COMM_WORLD_RANK:-$PMI_RANK}
env -0 > "$1/$r.env"
python3 -c 'import sys; print(sys.executable)' > "$1/$r.py"
echo user-test > "$1/$r.ran"
`

// envJob is the user's side of the environment test: a folder on PATH with
// the program test, a Python environment on PATH before it, and the
// environment the launcher is given (base).
type envJob struct {
	dir    string
	python string // the sys.executable the job's python3 must have
	base   []string
}

// newEnvJob makes the user's folder and Python environment: a venv made
// offline (python3 -m venv --without-pip, with the python3 on PATH, else
// /usr/bin/python3), else a folder with its own python3 (a link to the
// real one: sys.executable is the link's path).
func newEnvJob(t *testing.T) *envJob {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "test"), []byte(userTestScript), 0o755); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(dir, "venv")
	made := false
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := exec.CommandContext(ctx, py, "-m", "venv", "--without-pip", venv).Run()
		cancel()
		if err == nil {
			made = true
			break
		}
		os.RemoveAll(venv)
	}
	if !made {
		real, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
		if err != nil {
			t.Skipf("no python3 here: %v", err)
		}
		t.Logf("no venv could be made here: a folder with its own python3 stands in")
		if err := os.MkdirAll(filepath.Join(venv, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(strings.TrimSpace(string(real)), filepath.Join(venv, "bin", "python3")); err != nil {
			t.Fatal(err)
		}
	}
	var base []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "LD_PRELOAD", "CUDA_INJECTION64_PATH", "ACC_PROFLIB", "OMPI_MCA_mca_base_env_list":
			continue
		}
		base = append(base, kv)
	}
	base = append(base,
		"PATH="+filepath.Join(venv, "bin")+":"+bin+":"+os.Getenv("PATH"),
		"LD_LIBRARY_PATH="+filepath.Join(dir, "userlib"),
		"PYTHONPATH="+filepath.Join(dir, "userpy"))
	return &envJob{dir: dir, python: filepath.Join(venv, "bin", "python3"), base: base}
}

// run runs argv (a launcher by the name a user types) with the user's
// environment and a deadline, in the job's folder; it returns the folder
// its ranks wrote into and popmon's stderr.
func (j *envJob) run(t *testing.T, name string, argv ...string) (string, string) {
	t.Helper()
	out := filepath.Join(j.dir, name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	argv = append(argv, "test", out)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = j.base, j.dir
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	if ctx.Err() != nil || err != nil {
		t.Fatalf("%s: %v (deadline: %v)\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), err, ctx.Err(), so.String(), se.String())
	}
	return out, se.String()
}

// rankEnv reads what rank r of a run wrote: its environment and the
// sys.executable of its python3.
func rankEnv(t *testing.T, out string, r int, stderr string) (map[string]string, string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d.ran", r))); err != nil || strings.TrimSpace(string(b)) != "user-test" {
		t.Fatalf("rank %d did not run the user's test (the first on PATH; %v): another one ran\nstderr:\n%s", r, err, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d.env", r)))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	py, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d.py", r)))
	if err != nil {
		t.Fatal(err)
	}
	return env, strings.TrimSpace(string(py))
}

// envDiff lists how a rank's environment under popmon (got) differs from
// the same rank's without popmon (plain), beyond popmon's own variables
// (docs/cli.md, "Environment popmon sets"). given is the environment the
// launcher was given. The launcher sets variables of its own for each
// rank (Open MPI's OMPI_*/PMIX_* job ids, ports, PIDs, session folders and
// the rank's command line, MPICH's PMI_* descriptors and ports): they
// differ between any two runs, and are told apart by the rule that they
// are not in the environment the launcher was given. Their values are not
// compared, only that each is there in both runs. Every variable that was
// given (PATH, LD_LIBRARY_PATH, PYTHONPATH above all) must be exactly the
// same, and no variable may appear or vanish, except popmon's own:
// POPMON_*, LD_PRELOAD (popmon's library, and LLVM's libomp, first, then
// what was there), PYTHONPATH (popmon's modules first, then what was
// there), CUDA_INJECTION64_PATH (the library) and, for Open MPI,
// OMPI_MCA_mca_base_env_list naming those.
func envDiff(plain, got map[string]string, given map[string]bool, openMPI bool) []string {
	var bad []string
	lib := ""
	if pre, ok := got["LD_PRELOAD"]; ok {
		var rest []string
		for i, l := range strings.Split(pre, ":") {
			switch b := filepath.Base(l); {
			case i == 0 && b == "libpopmon.so":
				lib = l
			case i > 0 && strings.HasPrefix(b, "libomp"):
			default:
				rest = append(rest, l)
			}
		}
		if want := plain["LD_PRELOAD"]; lib == "" || strings.Join(rest, ":") != want {
			bad = append(bad, fmt.Sprintf("LD_PRELOAD=%q: want popmon's library first, then %q", pre, want))
		}
	} else {
		bad = append(bad, "no LD_PRELOAD")
	}
	if pp, ok := got["PYTHONPATH"]; ok {
		mod, rest, _ := strings.Cut(pp, ":")
		if st, err := os.Stat(filepath.Join(mod, "popmon")); err != nil || !st.IsDir() || rest != plain["PYTHONPATH"] {
			bad = append(bad, fmt.Sprintf("PYTHONPATH=%q: want popmon's modules, then %q", pp, plain["PYTHONPATH"]))
		}
	} else {
		bad = append(bad, "no PYTHONPATH (popmon's modules)")
	}
	if v, ok := got["CUDA_INJECTION64_PATH"]; ok && v != lib {
		bad = append(bad, fmt.Sprintf("CUDA_INJECTION64_PATH=%q: want the library %q", v, lib))
	}
	if v, ok := got["ACC_PROFLIB"]; ok && v != lib {
		bad = append(bad, fmt.Sprintf("ACC_PROFLIB=%q: want the library %q", v, lib))
	}
	own := func(k string) bool {
		return strings.HasPrefix(k, "POPMON_") || k == "LD_PRELOAD" || k == "PYTHONPATH" || k == "CUDA_INJECTION64_PATH" ||
			k == "ACC_PROFLIB" ||
			(openMPI && k == "OMPI_MCA_mca_base_env_list")
	}
	if list, ok := got["OMPI_MCA_mca_base_env_list"]; ok && openMPI {
		for _, n := range strings.Split(list, ";") {
			if !own(n) || n == "OMPI_MCA_mca_base_env_list" {
				bad = append(bad, fmt.Sprintf("OMPI_MCA_mca_base_env_list forwards %q, not popmon's", n))
			}
		}
	}
	keys := map[string]bool{}
	for k := range plain {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	for k := range keys {
		if own(k) {
			continue
		}
		p, inPlain := plain[k]
		g, inGot := got[k]
		switch {
		case inPlain != inGot:
			bad = append(bad, fmt.Sprintf("%s: %q without popmon, %q with (present: %v, %v)", k, p, g, inPlain, inGot))
		case given[k] && p != g:
			bad = append(bad, fmt.Sprintf("%s: %q without popmon, %q with", k, p, g))
		}
	}
	slices.Sort(bad)
	return bad
}

// TestRankEnvironmentAsWithoutPopmon: issue 30 item 1. popmon run started
// the launcher by its absolute path (/usr/bin/mpirun.openmpi), which Open
// MPI takes for --prefix /usr: /usr/bin and /usr/lib went first in the
// ranks' PATH and LD_LIBRARY_PATH, so a venv's python3 and a user's program
// called test were replaced by /usr/bin's. Each rank's whole environment
// under `popmon run -- mpirun …` and `mpirun … popmon exec -- …` is
// compared with the same command line's without popmon, with both MPIs.
func TestRankEnvironmentAsWithoutPopmon(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			j := newEnvJob(t)
			given := map[string]bool{}
			for _, kv := range j.base {
				k, _, _ := strings.Cut(kv, "=")
				given[k] = true
			}
			launcher := append([]string{impl.mpirun}, append(impl.extra, "-np", "2")...)
			plainOut, _ := j.run(t, "plain", launcher...)
			forms := []struct {
				name string
				argv []string
			}{
				{"run", append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", filepath.Join(j.dir, "run.json"), "--"}, launcher...)},
				{"exec", append(append([]string{}, launcher...), popmonBin, "exec", "--mpicc", impl.mpicc, "-o", filepath.Join(j.dir, "exec.json"), "--")},
			}
			for _, f := range forms {
				t.Run(f.name, func(t *testing.T) {
					out, se := j.run(t, f.name, f.argv...)
					for r := 0; r < 2; r++ {
						plain, plainPy := rankEnv(t, plainOut, r, "")
						if plainPy != j.python {
							t.Fatalf("rank %d's python3 without popmon is %s, not the venv's %s: the test's premise does not hold here", r, plainPy, j.python)
						}
						got, py := rankEnv(t, out, r, se)
						if py != plainPy {
							t.Errorf("rank %d: sys.executable %s under popmon, %s without", r, py, plainPy)
						}
						for _, d := range envDiff(plain, got, given, impl.name == "openmpi") {
							t.Errorf("rank %d: %s", r, d)
						}
					}
				})
			}
		})
	}
}

// killedKeepsNothing begins the line `mpirun … popmon exec` prints once per
// job (issue 30 item 7).
const killedKeepsNothing = "popmon: a job measured by popmon exec on each rank keeps no measurement when it is killed or crashes before MPI_Finalize; popmon run -- mpirun ... keeps what it measured until then"

// TestExecSaysKilledKeepsNothing: issue 30 item 7. A job of `mpirun …
// popmon exec` that is killed keeps nothing (each rank's popmon is
// replaced by the program: no one is left to assemble a partial
// measurement). Rank 0 says so once, at the start; under `popmon run`,
// which does keep a partial one, nothing is said.
func TestExecSaysKilledKeepsNothing(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			prog := filepath.Join(examples(t, impl), "imbalance")
			out := filepath.Join(t.TempDir(), "m.json")
			argv := append(launch(impl, 2), popmonBin, "exec", "--mpicc", impl.mpicc, "-o", out, "--", prog, "20", "2")
			so, se, code := runCommand(t, 60*time.Second, nil, argv...)
			if code != 0 || !strings.Contains(so, "ok ") || !strings.Contains(se, "popmon: measurement written to "+out) {
				t.Fatalf("%s: exit %d (-1: a hang)\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), code, so, se)
			}
			if n := strings.Count(se, killedKeepsNothing+"\n"); n != 1 {
				t.Errorf("the per-rank form's line printed %d times, want once per job:\n%s", n, se)
			}
			out2 := filepath.Join(t.TempDir(), "m.json")
			argv = append([]string{popmonBin, "run", "--format", "none", "--mpicc", impl.mpicc, "-o", out2, "--"},
				append(launch(impl, 2), popmonBin, "exec", "--mpicc", impl.mpicc, "--", prog, "20", "2")...)
			so, se, code = runCommand(t, 60*time.Second, nil, argv...)
			if code != 0 || !strings.Contains(so, "ok ") {
				t.Fatalf("%s: exit %d (-1: a hang)\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), code, so, se)
			}
			if strings.Contains(se, "popmon exec on each rank") {
				t.Errorf("popmon run around popmon exec keeps a partial measurement, but the line says it does not:\n%s", se)
			}
		})
	}
}

// TestExecHelpersNotMeasured: popmon exec inside popmon run's job runs the
// MPI compiler wrapper to find its library (mpicc --version, -show, -E),
// and those programs inherited the job's LD_PRELOAD and POPMON_SESSION:
// the library measured each as a serial program, and popmon run published
// one (popmon-mpicc-DATE.json, popmon-gcc-DATE.json with MPICH's script
// wrapper) beside the app's or, when the app's went elsewhere or there was
// none, as the run's measurement and report. With both MPIs, in a folder
// of its own: the app's measurement is the one file (popmon run's, or
// exec's -o), popmon run's report is of it, and a job that measures
// nothing leaves none (and is not said to be a static popmon).
func TestExecHelpersNotMeasured(t *testing.T) {
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			prog := filepath.Join(examples(t, impl), "imbalance")
			// The library is built once, outside the jobs' deadline.
			if so, se, code := popmon(t, nil, "build", "--mpicc", impl.mpicc); code != 0 {
				t.Fatalf("popmon build: exit %d\n%s%s", code, so, se)
			}
			perRank := []string{popmonBin, "exec", "--mpicc", impl.mpicc}
			for _, c := range []struct {
				name string
				exec []string // exec's options and program
				want string   // the one measurement file (a prefix): "" none
			}{
				{"app", []string{"--", prog, "20", "2"}, "popmon-imbalance-"},
				{"app -o", []string{"-o", "m.json", "--", prog, "20", "2"}, "m.json"},
				{"sh -c true", []string{"--", "sh", "-c", "true"}, ""},
			} {
				t.Run(c.name, func(t *testing.T) {
					dir := t.TempDir()
					argv := append([]string{popmonBin, "run", "--mpicc", impl.mpicc, "--"}, launch(impl, 2)...)
					argv = append(append(argv, perRank...), c.exec...)
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					defer cancel()
					cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
					cmd.Dir = dir
					var so, se bytes.Buffer
					cmd.Stdout, cmd.Stderr = &so, &se
					err := cmd.Run()
					if ctx.Err() != nil || err != nil {
						t.Fatalf("%s: %v (deadline: %v)\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), err, ctx.Err(), so.String(), se.String())
					}
					files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
					var names []string
					for _, f := range files {
						names = append(names, filepath.Base(f))
					}
					switch {
					case c.want == "" && len(names) != 0:
						t.Errorf("measurements %v of a job that measured nothing: popmon's own programs were measured\nstderr:\n%s", names, se.String())
					case c.want != "" && (len(names) != 1 || !strings.HasPrefix(names[0], c.want)):
						t.Errorf("measurements %v, want the app's alone (%s...): popmon's own programs were measured\nstderr:\n%s", names, c.want, se.String())
					case c.want != "":
						m := readChecked(t, files[0])
						if len(m.Command) == 0 || m.Command[0] != prog || !m.HasMPI() {
							t.Errorf("%s is of %q (MPI: %v), not of the app %s", names[0], m.Command, m.HasMPI(), prog)
						}
					}
					report := strings.Contains(se.String(), "Command:   "+prog+" 20 2\n")
					if strings.Contains(se.String(), "Command:") && !report {
						t.Errorf("popmon run's report is not of the app:\n%s", se.String())
					}
					// popmon run reports exec's -o file too, and says
					// nothing false about popmon exec or the app.
					if c.want != "" && (!report || strings.Contains(se.String(), "no measurement was written")) {
						t.Errorf("popmon run printed no report of the app:\n%s", se.String())
					}
					if strings.Contains(se.String(), "static executable") {
						t.Errorf("popmon run took popmon exec for the program:\n%s", se.String())
					}
				})
			}
		})
	}
}
