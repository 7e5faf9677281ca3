package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"unsafe"

	"github.com/popmon/popmon/internal/drom"
	"github.com/popmon/popmon/internal/fault"
)

const tasksetHelp = `
DLB's dlb_taskset for the processes popmon's library runs with DROM on
(DLB_ARGS=--drom, or popmon run --drom / popmon exec --drom): they keep their
CPUs in a node-local registry, and a process given new CPUs adopts them at
its next OpenMP parallel region (thread count and affinity) or DLB_PollDROM.

  popmon taskset --list [-p PID]          the processes and their CPUs
  popmon taskset -p PID -c LIST           set a running process's CPUs
                                          (taken from whoever has them)
  popmon taskset --remove LIST [-p PID]   take CPUs from whoever has them
  popmon taskset -c LIST [-b] -- CMD ...  run CMD on LIST, registered with it
                                          (CMD runs popmon's library: popmon
                                          run --drom, popmon exec --drom, or
                                          a DLB_HOME prefix with --drom)

LIST: 0,5-7, or a mask with CPU 0 the lowest bit: 0xE1, 0b11100001.
The registry is /dev/shm/popmon-drom-UID-KEY: KEY from POPMON_DROM_KEY, else
DLB_ARGS' --shm-key. docs/drom.md.`

func tasksetCmd(env *Env, args []string) error {
	fs := newFlags("taskset", "--list | -p PID -c LIST | --remove LIST | -c LIST -- CMD", tasksetHelp, env.Stderr)
	var list, borrow bool
	var set, remove string
	var pid int
	fs.BoolVar(&list, "list", false, "list the registered processes and their CPUs")
	fs.BoolVar(&list, "l", false, "same as --list")
	fs.StringVar(&set, "cpus", "", "the CPUs to set (for -p PID, or for CMD)")
	fs.StringVar(&set, "c", "", "same as --cpus")
	fs.StringVar(&set, "set", "", "same as --cpus")
	fs.StringVar(&set, "s", "", "same as --cpus")
	fs.StringVar(&remove, "remove", "", "take these CPUs from every process (or from -p PID)")
	fs.StringVar(&remove, "r", "", "same as --remove")
	fs.IntVar(&pid, "pid", 0, "act only on this process")
	fs.IntVar(&pid, "p", 0, "same as --pid")
	fs.BoolVar(&borrow, "borrow", false, "CMD: give the CPUs it took back to their owners when it ends")
	fs.BoolVar(&borrow, "b", false, "same as --borrow")
	if err := parse(fs, args); err != nil {
		return err
	}
	cmd := fs.Args()
	ops := 0
	for _, on := range []bool{list, set != "" && len(cmd) == 0, remove != ""} {
		if on {
			ops++
		}
	}
	if len(cmd) > 0 && (list || remove != "" || pid != 0) || len(cmd) == 0 && ops != 1 {
		return fault.Usagef("give one of --list, -p PID -c LIST, --remove LIST, or -c LIST -- CMD")
	}
	if set != "" && len(cmd) == 0 && pid == 0 {
		return fault.Usagef("-c LIST needs -p PID, or a command after --")
	}
	parseList := func(s string) (drom.Mask, error) {
		m, err := drom.ParseMask(s)
		if err != nil {
			return m, fault.Usagef("%v", err)
		}
		if n := nodeCPUs(); len(m.CPUs()) > 0 && m.CPUs()[len(m.CPUs())-1] >= n {
			return m, fault.Usagef("CPU %d is not on this node (CPUs 0-%d)", m.CPUs()[len(m.CPUs())-1], n-1)
		}
		return m, nil
	}
	path := drom.Name(drom.Key())
	switch {
	case len(cmd) > 0:
		var m drom.Mask
		var err error
		if set != "" {
			if m, err = parseList(set); err != nil {
				return err
			}
		} else if m, err = ownAffinity(); err != nil {
			return fault.Envf("%v", err)
		}
		reg, err := drom.Open(path, true)
		if err != nil {
			return fault.Envf("%v", err)
		}
		return tasksetExec(reg, m, borrow, cmd)
	case list:
		reg, err := openExisting(path)
		if err != nil || reg == nil {
			if err == nil {
				fmt.Fprintf(env.Stdout, "no process registered (no DROM registry %s)\n", path)
			}
			return err
		}
		defer reg.Close()
		return tasksetList(env, reg, pid)
	case remove != "":
		m, err := parseList(remove)
		if err != nil {
			return err
		}
		reg, err := openExisting(path)
		if err != nil || reg == nil {
			if err == nil {
				err = fault.Failf("no process is registered with DROM on this node (no %s)", path)
			}
			return err
		}
		defer reg.Close()
		for _, p := range reg.Procs() {
			if pid != 0 && p.PID != pid || p.Future.Minus(m) == p.Future {
				continue
			}
			nm := p.Future.Minus(m)
			if c := reg.SetMask(p.PID, nm, 0); c != drom.Success {
				return codeError(c, p.PID, nm)
			}
			fmt.Fprintf(env.Stdout, "PID %d's affinity set to: %s\n", p.PID, listOrNone(nm))
		}
		return nil
	default:
		m, err := parseList(set)
		if err != nil {
			return err
		}
		reg, err := openExisting(path)
		if err != nil || reg == nil {
			if err == nil {
				err = codeError(drom.NoProc, pid, m)
			}
			return err
		}
		defer reg.Close()
		if c := reg.SetMask(pid, m, 0); c != drom.Success {
			return codeError(c, pid, m)
		}
		fmt.Fprintf(env.Stdout, "PID %d's affinity set to: %s\n", pid, listOrNone(m))
		return nil
	}
}

// openExisting maps the registry, nil without error when there is none.
func openExisting(path string) (*drom.Registry, error) {
	reg, err := drom.Open(path, false)
	if errors.Is(err, drom.ErrNoRegistry) {
		return nil, nil
	}
	if err != nil {
		return nil, fault.Envf("%v", err)
	}
	return reg, nil
}

func listOrNone(m drom.Mask) string {
	if s := m.String(); s != "" {
		return s
	}
	return "none"
}

// codeError says what a DLB code means for pid, in one sentence.
func codeError(c drom.Code, pid int, m drom.Mask) error {
	switch c {
	case drom.NoProc:
		return fault.Failf("process %d is not registered with DROM on this node (%v): start it with DLB_ARGS=--drom or popmon run --drom", pid, c)
	case drom.PDirty:
		return fault.Failf("process %d has not adopted its last new CPUs yet (%v): it does at its next parallel region or DLB_PollDROM; try again then", pid, c)
	case drom.Perm:
		return fault.Failf("CPUs %s cannot be taken now (%v): a process that has them has not adopted its own last change yet", listOrNone(m), c)
	case drom.Timeout:
		return fault.Failf("process %d did not adopt CPUs %s within 1 s (%v)", pid, listOrNone(m), c)
	}
	return fault.Failf("setting process %d's CPUs to %s failed (%v)", pid, listOrNone(m), c)
}

func tasksetList(env *Env, reg *drom.Registry, pid int) error {
	ps := reg.Procs()
	if pid != 0 {
		for _, p := range ps {
			if p.PID == pid {
				fmt.Fprintf(env.Stdout, "PID %d's current affinity CPU list: %s\n", pid, listOrNone(p.Current))
				return nil
			}
		}
		return codeError(drom.NoProc, pid, drom.Mask{})
	}
	if len(ps) == 0 {
		fmt.Fprintln(env.Stdout, "no process registered")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PID\tCPUS\tNEW CPUS (NOT ADOPTED YET)\tSTATE")
	for _, p := range ps {
		pending, state := "-", "running"
		if p.Dirty {
			pending = listOrNone(p.Future)
		}
		if p.Preregistered {
			state = "not started (preregistered)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", p.PID, listOrNone(p.Current), pending, state)
	}
	return tw.Flush()
}

func nodeCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err == nil {
		s := strings.TrimSpace(string(b))
		if i := strings.LastIndexAny(s, "-,"); i >= 0 {
			s = s[i+1:]
		}
		if n, err := strconv.Atoi(s); err == nil {
			return n + 1
		}
	}
	return runtime.NumCPU()
}

func ownAffinity() (drom.Mask, error) {
	var set [drom.MaxCPUs / 64]uint64
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(set), uintptr(unsafe.Pointer(&set)))
	if e != 0 {
		return drom.Mask{}, fmt.Errorf("cannot read this process's CPUs: %v", e)
	}
	return drom.Mask(set), nil
}

// tasksetExec preregisters this process's pid with m (the command keeps it
// through exec; a launcher's first measured child takes it over through
// POPMON_DROM_PREINIT_PID), pins the thread that execs to m and replaces
// popmon with the command, as dlb_taskset's fork, DLB_DROM_PreInit and exec.
func tasksetExec(reg *drom.Registry, m drom.Mask, borrow bool, cmd []string) error {
	prog, err := exec.LookPath(cmd[0])
	if err != nil {
		return fault.NotRunnable(err, "%s: %v", cmd[0], err)
	}
	runtime.LockOSThread()
	flags := drom.FlagSteal
	if borrow {
		flags |= drom.FlagReturnStolen
	}
	pid := os.Getpid()
	if c := reg.PreInit(pid, m, flags); c != drom.Success {
		if c == drom.Perm {
			return fault.Failf("CPUs %s cannot be taken now (%v): a process that has them has not adopted its own last change yet", listOrNone(m), c)
		}
		return fault.Failf("registering CPUs %s failed (%v)", listOrNone(m), c)
	}
	set := [drom.MaxCPUs / 64]uint64(m)
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(set), uintptr(unsafe.Pointer(&set))); e != 0 {
		reg.PostFinalize(pid, borrow)
		return fault.Envf("cannot run on CPUs %s: %v", listOrNone(m), e)
	}
	environ := os.Environ()
	put := func(name, value string, onlyExisting bool) {
		for i, kv := range environ {
			if strings.HasPrefix(kv, name+"=") {
				environ[i] = name + "=" + value
				return
			}
		}
		if !onlyExisting {
			environ = append(environ, name+"="+value)
		}
	}
	put("POPMON_DROM", "1", false)
	put("POPMON_DROM_PREINIT_PID", strconv.Itoa(pid), false)
	put("OMP_NUM_THREADS", strconv.Itoa(m.Count()), true)
	reg.Close()
	err = syscall.Exec(prog, cmd, environ)
	return fault.NotRunnable(err, "%s: %v", cmd[0], err)
}
