package binscan

import (
	"path/filepath"
	"slices"
	"strings"
)

// maxDepth bounds how many launchers and wrappers may be nested.
const maxDepth = 32

// target is one program a command line starts, before it is read.
type target struct {
	arg      string            // the word naming it
	env      map[string]string // the environment it starts with
	dir      string            // its working directory
	launcher *Launcher         // the launcher it runs behind, or nil
	opaque   string            // why binscan cannot see the program, or ""
	cwdToo   bool              // the launcher also looks in the working directory (Open MPI)
	output   string            // the file a popmon exec -o in front of it names, or ""
}

// parser splits a command line into launchers and programs.
type parser struct {
	cwd       string
	launcher  func(word string, env map[string]string, dir string) *Launcher
	exists    func(word string, env map[string]string, dir string) bool
	targets   []target
	launchers []*Launcher
}

// command walks one command: wrappers are skipped, a launcher's options are
// parsed and each of its programs walked in turn, and anything else is the
// program.
func (p *parser) command(words []string, env map[string]string, dir string, under *Launcher, depth int) {
	output := ""
	for ; depth < maxDepth; depth++ {
		if len(words) == 0 {
			if under != nil {
				p.targets = append(p.targets, target{env: env, dir: dir, launcher: under,
					opaque: "no program after " + under.Arg})
			}
			return
		}
		base := filepath.Base(words[0])
		if rest, o, ok := popmonExec(words); ok {
			if o != "" {
				output = joinDir(dir, o)
			}
			words = rest
			continue
		}
		if w, ok := wrappers[base]; ok {
			rest, newEnv, newDir, opaque := w.skip(words[1:], env, dir)
			if opaque != "" {
				p.targets = append(p.targets, target{arg: words[0], env: env, dir: dir, launcher: under, opaque: opaque})
				return
			}
			words, env, dir = rest, newEnv, newDir
			continue
		}
		if under == nil && isLauncherName(base) {
			l := p.launcher(words[0], env, dir)
			p.launchers = append(p.launchers, l)
			for _, seg := range parseLauncher(l, words[1:], env, dir, p.exists) {
				if seg.opaque != "" {
					p.targets = append(p.targets, target{arg: seg.arg, env: seg.env, dir: seg.dir, launcher: l, opaque: seg.opaque})
					continue
				}
				p.command(seg.words, seg.env, seg.dir, l, depth+1)
			}
			return
		}
		t := target{arg: words[0], env: env, dir: dir, launcher: under, output: output}
		if under != nil && under.MPI != MPICH && !under.Slurm {
			t.cwdToo = true
		}
		if isShellName(base) {
			t.opaque = "a shell (" + base + "): cannot see what it runs"
		}
		p.targets = append(p.targets, t)
		return
	}
	p.targets = append(p.targets, target{arg: words[0], env: env, dir: dir, launcher: under,
		opaque: "launchers and wrappers nested too deeply"})
}

// isLauncherName reports whether a program name is an MPI or Slurm launcher.
func isLauncherName(base string) bool {
	switch base {
	case "orterun", "prterun", "srun":
		return true
	}
	for _, p := range []string{"mpirun", "mpiexec"} {
		if base == p || strings.HasPrefix(base, p+".") {
			return true
		}
	}
	return false
}

// isShellName reports whether a program name is a shell, whose command
// string binscan does not interpret.
func isShellName(base string) bool {
	switch base {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "csh", "tcsh", "fish", "ash", "busybox":
		return true
	}
	return false
}

// copyEnv returns a copy of env that may be changed.
func copyEnv(env map[string]string) map[string]string {
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[k] = v
	}
	return out
}

// joinDir resolves d against dir.
func joinDir(dir, d string) string {
	if filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	return filepath.Join(dir, d)
}

// wrapper describes a program that runs the command given after its options
// (env, time, nice, ...), as GNU getopt parses it: options stop at the first
// word that is not one.
type wrapper struct {
	shortArg   string          // short options that take a value
	longArg    map[string]bool // long options that take a value
	positional int             // words before the command (taskset's mask, timeout's duration)
	numeric    bool            // -N is an option (nice -10)
	env        bool            // NAME=VALUE words and env's own options
	pidMode    string          // a short option that means no command is run (taskset -p)
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

var wrappers = map[string]wrapper{
	"env":     {shortArg: "uCS", longArg: set("unset", "chdir", "split-string", "default-signal", "ignore-signal", "block-signal"), env: true},
	"time":    {shortArg: "fo", longArg: set("format", "output")},
	"nice":    {shortArg: "n", longArg: set("adjustment"), numeric: true},
	"numactl": {shortArg: "ipmNCMSfLoIPw", longArg: set("interleave", "preferred", "membind", "cpunodebind", "physcpubind", "shmmode", "shm", "file", "length", "offset", "shmid", "preferred-many", "weighted-interleave")},
	"taskset": {positional: 1, pidMode: "p"},
	"timeout": {shortArg: "sk", longArg: set("signal", "kill-after"), positional: 1},
	"stdbuf":  {shortArg: "ioe", longArg: set("input", "output", "error")},
	"nohup":   {},
}

// skip returns the command behind the wrapper's options, with the
// environment and directory the wrapper gives it; opaque says why there is
// no command to see.
func (w wrapper) skip(args []string, env map[string]string, dir string) (rest []string, outEnv map[string]string, outDir string, opaque string) {
	outEnv, outDir = env, dir
	changed := false
	setEnv := func() {
		if !changed {
			outEnv, changed = copyEnv(env), true
		}
	}
	value := func(opt string, val string) {
		switch {
		case !w.env:
		case opt == "u" || opt == "unset":
			setEnv()
			delete(outEnv, val)
		case opt == "C" || opt == "chdir":
			outDir = joinDir(outDir, val)
		case opt == "S" || opt == "split-string":
			// The split words come before the rest.
			args = append(strings.Fields(val), args...)
		}
	}
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			args = args[1:]
			break
		}
		if w.env && a == "-" {
			setEnv()
			outEnv = map[string]string{}
			args = args[1:]
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		args = args[1:]
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			if w.env && (name == "ignore-environment") {
				setEnv()
				outEnv = map[string]string{}
			}
			if w.longArg[name] {
				if !hasVal && len(args) > 0 {
					val, args = args[0], args[1:]
				}
				value(name, val)
			}
			continue
		}
		if w.numeric && a[1] >= '0' && a[1] <= '9' {
			continue
		}
		for i := 1; i < len(a); i++ {
			c := a[i : i+1]
			if c == w.pidMode {
				return nil, env, dir, "taskset -" + w.pidMode + " changes a running process: no program is started"
			}
			if w.env && c == "i" {
				setEnv()
				outEnv = map[string]string{}
				continue
			}
			if strings.Contains(w.shortArg, c) {
				val := a[i+1:]
				if val == "" && len(args) > 0 {
					val, args = args[0], args[1:]
				}
				value(c, val)
				break
			}
		}
	}
	if w.env {
		for len(args) > 0 {
			name, val, ok := strings.Cut(args[0], "=")
			if !ok || name == "" {
				break
			}
			setEnv()
			outEnv[name] = val
			args = args[1:]
		}
	}
	if len(args) < w.positional {
		return nil, env, dir, "no program after the wrapper's arguments"
	}
	return args[w.positional:], outEnv, outDir, ""
}

// PopmonExecBoolFlags are popmon exec's options that take no value (its
// others do, as Go's flag package parses them); cli's tests check the list
// against exec's flags.
var PopmonExecBoolFlags = []string{"force", "no-mpi", "drom", "lewi", "lewi-keep-one-cpu", "lewi-respect-cpuset", "lewi-barrier", "h", "help"}

// popmonExec returns the command behind `popmon exec [options] [--]`, the
// file its -o names ("" none), and whether words are one: the per-rank
// form inside `popmon run -- mpirun ...`, whose program is the application
// (popmon itself is a static binary that only replaces itself with it).
func popmonExec(words []string) (rest []string, output string, ok bool) {
	if len(words) < 2 || filepath.Base(words[0]) != "popmon" || words[1] != "exec" {
		return nil, "", false
	}
	args := words[2:]
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			return args[1:], output, true
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		args = args[1:]
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if !hasVal && !slices.Contains(PopmonExecBoolFlags, name) && len(args) > 0 {
			val, args = args[0], args[1:]
		}
		if name == "o" {
			output = val
		}
	}
	return args, output, true
}
