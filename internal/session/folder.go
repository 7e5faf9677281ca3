// Package session owns popmon run's lifecycle (Run: the job started,
// waited for and sampled, its measurements collected, published and
// reported) and the session folder of popmon run (POPMON_SESSION):
// its layout and what popmon reads from it (the measurements, the
// unmeasured-rank files, popmon-live.info), what popmon writes into it (the
// partial measurement, the time series, the trace moved next to the
// measurement), the live folder beside it (FindLive for top, serve and
// query), the measurements kept outside it, and the node agent that copies
// other nodes' live files into it.
package session

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/popmon/popmon/internal/safetext"
)

// The session folder of `popmon run` (POPMON_SESSION): the library of every
// measured process writes into it —
//
//	mpi-HOST-PID.json       rank 0's measurement of an MPI job
//	proc-HOST-PID.json      a process that did not use MPI
//	unmeasured-HOST-PID.txt a process that could not be measured: "rank R"
//	                        then one sentence saying why
//	ranks/KEY.SIZE.RANK     the registry of ranks carrying the library
//	                        (docs/library.md, "Finalize"), removed by each
//	                        rank at the end of its finalize
//
// and popmon picks the measurements from it when the command ends, with
// those the library could not write there and kept elsewhere (kept.go).

// File is one measurement found in a session folder.
type File struct {
	Path    string
	MPI     bool
	PID     int
	Elapsed int64
	Command []string
	mod     time.Time
}

// Result is what a session folder holds after the command ended.
type Result struct {
	Files      []File           // the measurements to publish, in order
	Unmeasured map[string][]int // reason -> ranks that gave it
	Full       string           // no measurement, and no room for one: NoRoom's sentence

	noneStarted bool   // no process started measuring (Saw)
	disabled    string // POPMON_DISABLE's value, when it switched the library off (Saw)
}

// Saw records what popmon run saw of the job that the session folder
// cannot say, for Explain: how many processes started measuring (their
// live files; -1 when unknown) and the job's environment. A job none of
// whose processes started measuring did not fail to write for want of
// room, however small the file system: Full is cleared.
func (s *Result) Saw(measured int, environ []string) {
	if measured == 0 {
		s.noneStarted, s.Full = true, ""
	}
	s.disabled, _ = Disabled(environ)
}

// Disabled returns the value of POPMON_DISABLE in environ (the last one)
// and whether it switches the library off, by the library's rule (set,
// not empty, not 0, no or off: shim/base/process.c, popmon_env_true).
func Disabled(environ []string) (string, bool) {
	v, set := "", false
	for _, kv := range environ {
		if val, ok := strings.CutPrefix(kv, "POPMON_DISABLE="); ok {
			v, set = val, true
		}
	}
	if !set || v == "" || v == "0" || v == "no" || v == "off" {
		return "", false
	}
	return v, true
}

// DisabledLine is the one line that says POPMON_DISABLE switches the
// measurement off ("" when it does not): for popmon exec's start and the
// end of a popmon run that measured nothing.
func DisabledLine(environ []string) string {
	v, ok := Disabled(environ)
	if !ok {
		return ""
	}
	return disabledSentence(v)
}

func disabledSentence(v string) string {
	return fmt.Sprintf("POPMON_DISABLE=%s is set in the environment: it switches popmon's measurement off in every process, "+
		"so nothing is measured (unset it, or set it to 0, to measure)", safeValue(v))
}

// safeValue is a variable's value fit to print in one line: at most 40
// bytes, escaped (safetext).
func safeValue(v string) string {
	if len(v) > 40 {
		return safetext.Text(v[:40]) + "…"
	}
	return safetext.Text(v)
}

// Read picks the measurements of a session: every MPI job's file;
// or, when no process used MPI, the direct child's file (else the longest);
// and gathers why processes could not be measured. kept are measurements
// of the session kept outside it (FindKept), picked like its own; those not
// picked are removed, as the session folder's go with it.
func Read(dir string, childPid int, kept ...string) (*Result, error) {
	res := &Result{Unmeasured: map[string][]int{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return res, fmt.Errorf("reading the session folder: %w", err)
	}
	var mpi, single []File
	add := func(p, name string, info os.FileInfo) {
		sf := readHead(p)
		sf.MPI, sf.mod = strings.HasPrefix(name, "mpi-"), info.ModTime()
		if sf.MPI {
			mpi = append(mpi, sf)
		} else {
			single = append(single, sf)
		}
	}
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(dir, name)
		if !e.Type().IsRegular() {
			continue
		}
		if strings.HasPrefix(name, "unmeasured-") && strings.HasSuffix(name, ".txt") {
			if rank, why, ok := readUnmeasured(p); ok {
				res.Unmeasured[why] = append(res.Unmeasured[why], rank)
			}
			continue
		}
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		add(p, name, info)
	}
	for _, p := range kept {
		if info, err := os.Lstat(p); err == nil && info.Mode().IsRegular() {
			add(p, keptName(filepath.Base(p)), info)
		}
	}
	switch {
	case len(mpi) > 0:
		sort.Slice(mpi, func(i, j int) bool { return mpi[i].mod.Before(mpi[j].mod) })
		res.Files = mpi
	case len(single) > 0:
		res.Files = single[:1]
		sort.Slice(single, func(i, j int) bool { return single[i].Elapsed > single[j].Elapsed })
		res.Files = single[:1]
		for _, s := range single {
			if s.PID == childPid {
				res.Files = []File{s}
			}
		}
	default:
		// Nothing written: was there no room for it?
		res.Full = NoRoom(dir)
	}
	for _, p := range kept {
		if !slices.ContainsFunc(res.Files, func(f File) bool { return f.Path == p }) {
			os.Remove(p)
		}
	}
	return res, nil
}

// readHead reads what Read needs of a measurement: its command, its
// first process's pid and its longest elapsed time.
func readHead(p string) File {
	sf := File{Path: p}
	var head struct {
		Command   []string `json:"command"`
		Processes []struct {
			Pid int `json:"pid"`
		} `json:"processes"`
		Regions []struct {
			Processes []struct {
				ElapsedNS int64 `json:"elapsed_ns"`
			} `json:"processes"`
			Summary *struct {
				ElapsedMaxNS int64 `json:"elapsed_max_ns"`
			} `json:"summary"` // summary form
		} `json:"regions"`
	}
	if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &head) == nil {
		sf.Command = head.Command
		if len(head.Processes) > 0 {
			sf.PID = head.Processes[0].Pid
		}
		if len(head.Regions) > 0 {
			for _, pr := range head.Regions[0].Processes {
				sf.Elapsed = max(sf.Elapsed, pr.ElapsedNS)
			}
			if s := head.Regions[0].Summary; s != nil {
				sf.Elapsed = max(sf.Elapsed, s.ElapsedMaxNS)
			}
		}
	}
	return sf
}

// readUnmeasured reads an unmeasured-*.txt file: "rank R" then the reason.
func readUnmeasured(path string) (rank int, why string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 4096))
	if !sc.Scan() {
		return 0, "", false
	}
	r, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "rank "))
	if err != nil || !sc.Scan() {
		return 0, "", false
	}
	return r, strings.TrimSpace(sc.Text()), true
}

// Explain returns what to tell the user when no measurement was written:
// why processes could not be measured, as the library or binscan said, or
// what usually causes it.
func (s *Result) Explain(command string, refused []string, killed syscall.Signal) []string {
	var out []string
	reasons := make([]string, 0, len(s.Unmeasured))
	for why := range s.Unmeasured {
		reasons = append(reasons, why)
	}
	sort.Strings(reasons)
	for _, why := range reasons {
		out = append(out, fmt.Sprintf("%s (%s)", why, rankList(s.Unmeasured[why])))
	}
	if len(out) == 0 {
		// What binscan saw before the launch, when no process said more.
		out = append(out, refused...)
	}
	switch {
	case s.disabled != "":
		out = append(out, "no measurement was written: "+disabledSentence(s.disabled))
	case killed != 0:
		out = append(out, fmt.Sprintf("no measurement was written: %s was killed by %s before its processes finished "+
			"(the library writes the measurement at MPI_Finalize, or at exit without MPI)", command, signalName(killed)))
	case len(out) > 0 || len(refused) > 0:
		out = append(out, "no measurement was written")
	case s.Full != "":
		out = append(out, fmt.Sprintf("no measurement was written: %s: the library could not write the "+
			"measurement there, nor keep it elsewhere (its line above says why)", s.Full))
	case s.noneStarted:
		out = append(out, fmt.Sprintf("no measurement was written: no process that %s started was measured "+
			"(did the program start? a statically linked program is not measured, nor one that a job script "+
			"starts with an LD_PRELOAD that drops popmon's library: keep it, LD_PRELOAD=\"$LD_PRELOAD:other.so\")", command))
	default:
		out = append(out, fmt.Sprintf("no measurement was written: %s ran no program popmon could measure "+
			"(did the program call MPI_Finalize? a job script that sets LD_PRELOAD must keep popmon's library in it: "+
			"LD_PRELOAD=\"$LD_PRELOAD:other.so\")", command))
	}
	return out
}

// rankList writes ranks compactly: "rank 3", "ranks 1-3, 7".
func rankList(ranks []int) string {
	sort.Ints(ranks)
	var parts []string
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ranks[i], ranks[j]))
		} else {
			parts = append(parts, strconv.Itoa(ranks[i]))
		}
		i = j + 1
	}
	if len(ranks) == 1 {
		return "rank " + parts[0]
	}
	return "ranks " + strings.Join(parts, ", ")
}

// signalName names a signal as users know it: "SIGTERM".
func signalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP",
		syscall.SIGQUIT: "SIGQUIT", syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT",
		syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2",
		syscall.SIGPIPE: "SIGPIPE"}
	if n, ok := names[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}
