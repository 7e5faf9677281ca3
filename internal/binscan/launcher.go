package binscan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Launcher is an MPI or Slurm launcher on the command line and what it
// belongs to.
type Launcher struct {
	Arg      string   // the word on the command line
	Path     string   // where it was found ("" when it was not)
	Links    []string // the symbolic links followed from Path, each step, Path first
	Resolved string   // the file at the end of Links
	// MPI is the MPI the launcher belongs to: OpenMPI or MPICH, NoMPI for
	// srun (the application's own MPI decides), UnknownMPI when binscan
	// cannot tell.
	MPI   MPI
	Slurm bool   // srun: Slurm starts the ranks
	How   string // the evidence, one phrase
}

// LauncherMPI finds which MPI the launcher at path belongs to, from the
// names along its symbolic links (/usr/bin/mpirun → /etc/alternatives/mpirun
// → /usr/bin/mpirun.openmpi → orterun) and its own shared libraries
// (orterun links libopen-rte, Open MPI 5's prterun libprrte, MPICH's Hydra
// none of Open MPI's). It reads the file and never runs it.
func LauncherMPI(path string) (*Launcher, error) {
	l := &Launcher{Arg: path, Path: path}
	if err := l.identify(newBudget()); err != nil {
		return l, err
	}
	return l, nil
}

// maxLinks bounds the symbolic links followed, as the kernel does.
const maxLinks = 40

// identify fills in Links, Resolved, MPI, Slurm and How for l.Path.
func (l *Launcher) identify(b *budget) error {
	cur := l.Path
	l.Links = []string{cur}
	for i := 0; ; i++ {
		st, err := os.Lstat(cur)
		if err != nil {
			l.MPI, l.How = UnknownMPI, "not readable"
			return fmt.Errorf("launcher %s: %w", l.Path, err)
		}
		if st.Mode()&os.ModeSymlink == 0 {
			break
		}
		if i == maxLinks {
			l.MPI, l.How = UnknownMPI, "too many symbolic links"
			return fmt.Errorf("launcher %s: too many symbolic links", l.Path)
		}
		t, err := os.Readlink(cur)
		if err != nil {
			l.MPI, l.How = UnknownMPI, "unreadable symbolic link"
			return fmt.Errorf("launcher %s: %w", l.Path, err)
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(cur), t)
		}
		cur = filepath.Clean(t)
		l.Links = append(l.Links, cur)
	}
	l.Resolved = cur
	chain := l.chain()

	// The names along the links.
	nameMPI, nameSlurm, nameHow := NoMPI, false, ""
	for _, p := range l.Links {
		base := filepath.Base(p)
		if m, slurm := launcherNameFamily(base); m != NoMPI || slurm {
			nameMPI, nameSlurm, nameHow = m, slurm, "named "+base
		}
	}

	// Its own libraries.
	libMPI, libHow := NoMPI, ""
	kind, interp, err := fileKind(cur)
	if err != nil {
		l.MPI, l.How = UnknownMPI, "not readable"
		return fmt.Errorf("launcher %s: %w", l.Path, err)
	}
	switch kind {
	case "elf":
		obj, err := readObject(cur, b)
		if err != nil {
			return l.decide(nameMPI, nameSlurm, nameHow, chain, fmt.Sprintf("%v", err))
		}
		for _, n := range obj.needed {
			if m := launcherLibFamily(n); m != NoMPI {
				libMPI, libHow = m, "links "+n
				break
			}
		}
	case "script":
		libHow = "a script (#!" + interp + ")"
	default:
		libHow = "not an ELF program"
	}
	if libMPI != NoMPI {
		l.MPI, l.How = libMPI, chain+libHow
		return nil
	}
	return l.decide(nameMPI, nameSlurm, nameHow, chain, libHow)
}

// decide settles on the names' evidence when the libraries gave none.
func (l *Launcher) decide(m MPI, slurm bool, how, chain, other string) error {
	switch {
	case slurm:
		l.Slurm, l.MPI, l.How = true, NoMPI, chain+how+": Slurm (the application's MPI decides)"
	case m != NoMPI:
		l.MPI, l.How = m, chain+how
	default:
		l.MPI = UnknownMPI
		l.How = chain + "cannot tell which MPI it belongs to"
		if other != "" {
			l.How += " (" + other + ")"
		}
	}
	return nil
}

// chain describes the links followed, "a → b → c: ", or "" when there were
// none.
func (l *Launcher) chain() string {
	if len(l.Links) < 2 {
		return ""
	}
	return strings.Join(l.Links, " → ") + ": "
}

// launcherNameFamily tells an MPI from a launcher's file name.
func launcherNameFamily(base string) (MPI, bool) {
	switch base {
	case "srun":
		return NoMPI, true
	case "orterun", "prterun", "prte", "prun", "mpirun.openmpi", "mpiexec.openmpi":
		return OpenMPI, false
	case "mpiexec.hydra", "mpirun.mpich", "mpiexec.mpich", "mpirun.hydra":
		return MPICH, false
	}
	switch {
	case strings.Contains(base, "openmpi"):
		return OpenMPI, false
	case strings.Contains(base, "mpich"), strings.Contains(base, "hydra"):
		return MPICH, false
	}
	return NoMPI, false
}

// launcherLibFamily tells an MPI from a library a launcher links.
func launcherLibFamily(lib string) MPI {
	for _, p := range []string{"libopen-rte.so", "libopen-pal.so", "libprrte.so", "libmpi.so.40", "libmpi.so.20"} {
		if strings.HasPrefix(lib, p) {
			return OpenMPI
		}
	}
	if strings.HasPrefix(lib, "libmpich") {
		return MPICH
	}
	return NoMPI
}

// segment is one program's part of a launcher's command line (MPMD command
// lines have several, separated by ":").
type segment struct {
	words  []string // the program and its arguments
	env    map[string]string
	dir    string
	arg    string // for an opaque segment: the word naming what binscan cannot see
	opaque string
}

// Option arities: how many words follow an option given without "=value".
// Open MPI (orterun, prterun) and MPICH's Hydra accept options with one or
// two dashes; srun's are GNU getopt options.
var (
	ompiArgs = map[string]int{
		"np": 1, "n": 1, "c": 1, "N": 1, "npernode": 1, "npersocket": 1, "ppr": 1,
		"map-by": 1, "rank-by": 1, "bind-to": 1, "H": 1, "host": 1, "hostfile": 1,
		"machinefile": 1, "default-hostfile": 1, "add-host": 1, "add-hostfile": 1,
		"x": 1, "wdir": 1, "wd": 1, "path": 1, "prefix": 1, "preload-files": 1,
		"preload-files-dest-dir": 1, "output-filename": 1, "report-pid": 1,
		"report-uri": 1, "ompi-server": 1, "stdin": 1, "timeout": 1, "app": 1,
		"launch-agent": 1, "rankfile": 1, "rf": 1, "personality": 1, "dvm": 1,
		"xterm": 1, "max-vm-size": 1, "cpu-set": 1, "cpu-list": 1, "cpus-per-proc": 1,
		"cpus-per-rank": 1, "slot-list": 1, "tune": 1, "am": 1, "mindist": 1,
		"output": 1, "display": 1, "runtime-options": 1, "stream-buffering": 1,
		"max-restarts": 1, "initial-errhandler": 1, "keepalive": 1, "tmpdir": 1,
		"mca": 2, "gmca": 2, "omca": 2, "prtemca": 2, "pmixmca": 2,
	}
	ompiFlags = set("oversubscribe", "allow-run-as-root", "use-hwthread-cpus", "bynode",
		"byslot", "report-bindings", "display-map", "display-allocation", "tag-output",
		"timestamp-output", "merge-stderr-to-stdout", "xml", "v", "verbose", "q", "quiet",
		"d", "debug", "s", "preload-binary", "nolocal", "noprefix", "do-not-launch",
		"enable-recovery", "continuous", "hetero-nodes", "set-sid", "show-progress",
		"leave-session-attached", "get-stack-traces", "report-state-on-timeout",
		"use-regexp", "fwd-mpirun-port", "do-not-resolve", "no-ready-msg", "dvm-hnp",
		"h", "help", "V", "version", "report-child-jobs-separately", "bind-to-core",
		"bind-to-socket", "bycore", "bysocket", "nooversubscribe", "parsable",
		"parseable", "mpi-tool", "with-ft", "disable-recovery", "abort-on-non-zero-status")
	hydraArgs = map[string]int{
		"n": 1, "np": 1, "f": 1, "hostfile": 1, "machinefile": 1, "machine": 1,
		"host": 1, "hosts": 1, "ppn": 1, "perhost": 1, "genvlist": 1, "envlist": 1,
		"wdir": 1, "dir": 1, "configfile": 1, "launcher": 1, "launcher-exec": 1,
		"bootstrap": 1, "bootstrap-exec": 1, "rmk": 1, "demux": 1, "iface": 1,
		"nameserver": 1, "bind-to": 1, "binding": 1, "map-by": 1, "membind": 1,
		"topolib": 1, "order-nodes": 1, "prepend-pattern": 1, "outfile-pattern": 1,
		"errfile-pattern": 1, "ckpointlib": 1, "ckpoint-prefix": 1, "ckpoint-num": 1,
		"ckpoint-interval": 1, "gpus-per-proc": 1, "usize": 1, "tmpdir": 1,
		"localhost": 1, "genvexcl": 1, "envexcl": 1, "gdba": 1, "gtool": 1,
		"genv": 2, "env": 2,
	}
	hydraFlags = set("genvall", "genvnone", "envall", "envnone", "l", "prepend-rank",
		"profile", "verbose", "v", "info", "print-all-exitcodes", "enable-x",
		"disable-x", "disable-auto-cleanup", "disable-hostname-propagation",
		"silent-abort", "rr", "ordered-output", "pmi-port", "h", "help", "version",
		"s", "iexit-codes", "gdb", "disable-stdin-forward")
	srunShortArgs = "ABcCdDeGiJLmMnNopqrStTwWx"
	srunShortOpt  = "IkK" // optional value, attached only
	srunLongArgs  = set("account", "acctg-freq", "begin", "chdir", "cluster", "clusters",
		"comment", "constraint", "container", "container-id", "core-spec", "cores-per-socket",
		"cpu-bind", "cpu-freq", "cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot",
		"dependency", "distribution", "error", "exclude", "export", "extra-node-info",
		"gpu-bind", "gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task",
		"gres", "gres-flags", "het-group", "hint", "input", "job-name", "jobid",
		"licenses", "mail-type", "mail-user", "mcs-label", "mem", "mem-bind",
		"mem-per-cpu", "mem-per-gpu", "mincpus", "mpi", "network", "nodefile",
		"nodelist", "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu",
		"ntasks-per-node", "ntasks-per-socket", "open-mode", "output", "partition",
		"power", "prefer", "priority", "profile", "prolog", "epilog", "qos",
		"relative", "reservation", "segment", "signal", "slurmd-debug",
		"sockets-per-node", "switches", "task-epilog", "task-prolog", "thread-spec",
		"threads", "threads-per-core", "time", "time-min", "tmp", "tres-bind",
		"tres-per-task", "uid", "gid", "wait", "wckey", "bcast-exclude", "cpus-per-node")
)

// optionTables returns the option arities and flags for a launcher.
func optionTables(l *Launcher) (map[string]int, map[string]bool) {
	switch l.MPI {
	case OpenMPI:
		return ompiArgs, ompiFlags
	case MPICH:
		return hydraArgs, hydraFlags
	}
	// Unknown: both, Open MPI's arity where they differ.
	args := map[string]int{}
	flags := map[string]bool{}
	for k, v := range hydraArgs {
		args[k] = v
	}
	for k, v := range ompiArgs {
		args[k] = v
	}
	for k := range hydraFlags {
		flags[k] = true
	}
	for k := range ompiFlags {
		flags[k] = true
	}
	return args, flags
}

// parseLauncher splits a launcher's arguments into its programs: it skips
// the launcher's own options, takes the first other word as the program,
// and starts again after a ":" (MPMD). Options that set the program's
// environment (-x, -genv, -env, --export) or working directory (-wdir,
// --chdir) are applied to it. An option binscan does not know is taken to
// have a value when the word after it names no program that exists.
func parseLauncher(l *Launcher, args []string, env map[string]string, dir string,
	exists func(string, map[string]string, string) bool) []segment {
	var segs []segment
	for first := true; first || len(args) > 0; first = false {
		seg := segment{env: env, dir: dir}
		changed := false
		setEnv := func(k, v string) {
			if !changed {
				seg.env, changed = copyEnv(seg.env), true
			}
			seg.env[k] = v
		}
		var n int
		if l.Slurm {
			n = srunOptions(args, &seg, setEnv, exists)
		} else {
			n = mpiOptions(l, args, &seg, setEnv, exists)
		}
		if seg.opaque != "" {
			segs = append(segs, seg)
			return segs
		}
		args = args[n:]
		end := len(args)
		for i, a := range args {
			if a == ":" {
				end = i
				break
			}
		}
		seg.words = args[:end]
		segs = append(segs, seg)
		if end == len(args) {
			break
		}
		args = args[end+1:]
	}
	return segs
}

// mpiOptions skips the options of Open MPI's mpirun or Hydra's mpiexec at
// the start of args and returns how many words they take.
func mpiOptions(l *Launcher, args []string, seg *segment, setEnv func(k, v string),
	exists func(string, map[string]string, string) bool) int {
	arity, flags := optionTables(l)
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			return i + 1
		}
		if len(a) < 2 || a[0] != '-' {
			return i
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		n, known := arity[name]
		if hasVal {
			n = 0
		} else if !known && !flags[name] && i+2 < len(args) && !strings.HasPrefix(args[i+1], "-") &&
			!exists(args[i+1], seg.env, seg.dir) {
			n = 1 // an option binscan does not know, with a value
		}
		if i+1+n > len(args) {
			return len(args)
		}
		vals := args[i+1 : i+1+n]
		if hasVal {
			vals = []string{val}
		}
		switch {
		case name == "x" && len(vals) == 1:
			if k, v, ok := strings.Cut(vals[0], "="); ok {
				setEnv(k, v)
			}
		case (name == "genv" || name == "env") && len(vals) == 2:
			setEnv(vals[0], vals[1])
		case (name == "genv" || name == "env") && len(vals) == 1:
			if k, v, ok := strings.Cut(vals[0], "="); ok {
				setEnv(k, v)
			}
		case (name == "wdir" || name == "wd" || name == "dir") && len(vals) == 1:
			seg.dir = joinDir(seg.dir, vals[0])
		case name == "app" && l.MPI != MPICH && len(vals) == 1:
			seg.arg, seg.opaque = vals[0], "an Open MPI appfile (--app "+vals[0]+"): cannot see what it runs"
			return len(args)
		case name == "configfile" && l.MPI != OpenMPI && len(vals) == 1:
			seg.arg, seg.opaque = vals[0], "a Hydra configuration file (-configfile "+vals[0]+"): cannot see what it runs"
			return len(args)
		}
		i += 1 + n
	}
	return i
}

// srunOptions skips srun's options at the start of args and returns how
// many words they take.
func srunOptions(args []string, seg *segment, setEnv func(k, v string),
	exists func(string, map[string]string, string) bool) int {
	multiProg := false
	apply := func(name, val string) {
		switch name {
		case "chdir", "D":
			seg.dir = joinDir(seg.dir, val)
		case "export":
			for _, kv := range strings.Split(val, ",") {
				if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
					setEnv(k, v)
				}
			}
		}
	}
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		i++
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			if name == "multi-prog" {
				multiProg = true
			}
			if srunLongArgs[name] && !hasVal && i < len(args) {
				val = args[i]
				i++
			}
			apply(name, val)
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j : j+1]
			if strings.Contains(srunShortOpt, c) {
				break // the rest of the word is its value
			}
			if strings.Contains(srunShortArgs, c) {
				val := a[j+1:]
				if val == "" && i < len(args) {
					val = args[i]
					i++
				}
				apply(c, val)
				break
			}
		}
	}
	if multiProg && i < len(args) {
		seg.arg = args[i]
		seg.opaque = "srun --multi-prog " + args[i] + ": the programs are listed in that file; cannot see what it runs"
		return len(args)
	}
	return i
}
