package pop

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/popmon/popmon/measure"
)

// LewiProcess is one process's CPU time moved by LeWI and its accounts
// against the CPUs it held over time (docs/lewi.md).
type LewiProcess struct {
	Rank int
	measure.ProcessLewi
	// Held is nil where the accounts could not be set against the CPUs
	// held ([Run.LewiHeldNote] says why).
	Held *HeldAccounts
}

// HeldAccounts are a process's accounts (or the sums of a run's) against
// the CPU time it held while LeWI moved CPUs: its own CPUs over its whole
// run, less what it lent, plus what it borrowed. The parts add up to
// CPUNS: useful time, MPI time on a CPU it held (the MPI thread's wait on
// a lent CPU is not; its workers' idle time while it is in MPI is, on
// CPUs held), OpenMP idle and runtime time on CPUs it held (threads beyond
// its own CPUs count only while they ran on borrowed ones), and GPU
// runtime time. popmon's own cost is left out, as the
// metrics leave it out.
type HeldAccounts struct {
	// ElapsedNS is the process's elapsed time (the run's: the largest).
	ElapsedNS int64
	// CPUNS is the CPU time held.
	CPUNS                            int64
	UsefulNS, MPINS, OpenMPNS, GPUNS int64
}

// MeanCPUs is the number of CPUs held on average over the elapsed time.
func (h *HeldAccounts) MeanCPUs() float64 {
	if h == nil || h.ElapsedNS <= 0 {
		return 0
	}
	return float64(h.CPUNS) / float64(h.ElapsedNS)
}

// Share is part's share of the CPU time held (0 without any).
func (h *HeldAccounts) Share(part int64) float64 {
	if h == nil || h.CPUNS <= 0 {
		return 0
	}
	return float64(part) / float64(h.CPUNS)
}

func (h *HeldAccounts) add(o HeldAccounts) {
	h.ElapsedNS = max(h.ElapsedNS, o.ElapsedNS)
	h.CPUNS += o.CPUNS
	h.UsefulNS += o.UsefulNS
	h.MPINS += o.MPINS
	h.OpenMPNS += o.OpenMPNS
	h.GPUNS += o.GPUNS
}

// Held sets a process's accounts a of its whole run against the CPU time
// it held under LeWI: own CPUs (those LeWI registered, its affinity at
// start in older files) over its elapsed time, changed by DROM's changes
// of them, less the CPU time it lent, plus what it borrowed (l). The lent
// time comes out of the MPI time (the part that was the MPI thread's own
// CPU, l.LentCallerNS) and out of the workers' idle time outside parallel
// regions (their CPUs, lent while the MPI thread waits): their idle time
// in MPI first (lending happens in MPI calls), then their serialization
// time. The time threads beyond its own CPUs did not run on a borrowed CPU
// comes out of what is left of the workers' idle time, their
// serialization first (the time they idle while the MPI thread works),
// then their idle time in MPI. An error says, in one clause,
// why the accounts cannot be set against the CPUs held: a number missing
// from the file, or lent or borrowed time that does not fit the accounts
// it must lie in (beyond the accounts invariant's tolerance).
func Held(a measure.ProcessAccounts, own int, l measure.ProcessLewi) (HeldAccounts, error) {
	if own <= 0 {
		return HeldAccounts{}, errors.New("its own CPUs were not recorded")
	}
	if l.LentCallerNS == nil {
		return HeldAccounts{}, errors.New("the file does not say how much of the lent time was its MPI thread's (an older library)")
	}
	e, cpus, caller := a.ElapsedNS, int64(a.CPUs), *l.LentCallerNS
	if e <= 0 || cpus <= 0 || l.LentCPUNS < 0 || l.BorrowedCPUNS < 0 || caller < 0 || caller > l.LentCPUNS {
		return HeldAccounts{}, errors.New("its accounts or LeWI times are out of range")
	}
	tol := measure.InvariantTolerance*float64(e)*float64(cpus) + measure.InvariantSlackNS*float64(cpus)
	ownCPU := int64(own)*e + l.OwnChangeCPUNS // its own CPUs over time
	if float64(ownCPU) > float64(cpus*e)+tol {
		return HeldAccounts{}, fmt.Errorf("it had %.2f CPUs of its own on average, more than the %d threads it ran", float64(ownCPU)/float64(e), cpus)
	}
	if ownCPU < 0 {
		return HeldAccounts{}, errors.New("its accounts or LeWI times are out of range")
	}
	// extra: the time its threads ran on none of its CPUs (threads beyond
	// its own CPUs outside borrowed ones).
	extra := cpus*e - ownCPU - l.BorrowedCPUNS
	workersLent := l.LentCPUNS - caller
	idle := a.OMPSerializationNS + a.MPIWorkerIdleNS // workers idle outside parallel regions
	switch {
	case float64(caller) > float64(a.MPINS)+tol:
		return HeldAccounts{}, fmt.Errorf("its MPI thread's CPU was lent for %d ns, longer than its %d ns in MPI", caller, a.MPINS)
	case float64(extra) < -tol:
		return HeldAccounts{}, fmt.Errorf("it borrowed %d ns of CPU time, more than its threads beyond its own %d CPUs ran", l.BorrowedCPUNS, own)
	case float64(max(extra, 0)+workersLent) > float64(idle)+tol:
		return HeldAccounts{}, fmt.Errorf("its threads were without a CPU of its for %d ns, longer than they were idle outside parallel regions (%d ns; more threads than CPUs?)", max(extra, 0)+workersLent, idle)
	}
	mw, ser := a.MPIWorkerIdleNS, a.OMPSerializationNS
	fromMW := min(workersLent, mw)
	mw, ser = mw-fromMW, ser-(workersLent-fromMW)
	fromSer := min(max(extra, 0), max(ser, 0))
	ser, mw = ser-fromSer, mw-(max(extra, 0)-fromSer)
	h := HeldAccounts{
		ElapsedNS: e,
		UsefulNS:  a.UsefulNS,
		MPINS:     max(a.MPINS-caller, 0) + max(mw, 0) + a.OtherNS,
		OpenMPNS:  max(ser, 0) + a.OMPLoadImbalanceNS + a.OMPSchedulingNS,
		GPUNS:     a.GPURuntimeNS,
	}
	h.CPUNS = h.UsefulNS + h.MPINS + h.OpenMPNS + h.GPUNS
	// The same CPU time from the registry's side: it differs from the
	// accounts' only where they break the invariant.
	if held := ownCPU - l.LentCPUNS + l.BorrowedCPUNS - a.InstrumentationNS; float64(abs64(held-h.CPUNS)) > tol {
		return HeldAccounts{}, fmt.Errorf("its accounts add up to %d ns of CPU time held, the CPUs it held to %d ns", h.CPUNS, held)
	}
	return h, nil
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// heldOf sets each process of m that in(p) names (ok) against the CPUs it
// held, from its own CPUs and l (Held), on the whole run's accounts: by
// process, the run's sums (nil when one process cannot be set, or m has no
// process records), and why not in one clause ("" with them). A process
// in() leaves out (off: a clause, "" to skip it quietly) makes the sums
// nil too when off is said.
func heldOf(m *measure.Measurement, in func(p *measure.Process) (own int, l measure.ProcessLewi, off string, ok bool)) (held map[int]*HeldAccounts, sum *HeldAccounts, note string) {
	g, _ := m.Global()
	accounts := map[int]*measure.ProcessAccounts{}
	if g != nil && g.Summary == nil {
		for i := range g.Processes {
			if g.Processes[i].Threads == 0 {
				accounts[g.Processes[i].Rank] = &g.Processes[i]
			}
		}
	}
	held = map[int]*HeldAccounts{}
	total := &HeldAccounts{}
	for i := range m.Processes {
		p := &m.Processes[i]
		own, l, off, ok := in(p)
		if !ok {
			if off != "" && note == "" {
				note = fmt.Sprintf("rank %d %s", p.Rank, off)
			}
			continue
		}
		var err error
		if a := accounts[p.Rank]; a == nil {
			err = errors.New("the whole run has no accounts of it")
		} else if h, e := Held(*a, own, l); e != nil {
			err = e
		} else {
			held[p.Rank] = &h
			total.add(h)
		}
		if err != nil && note == "" {
			note = fmt.Sprintf("rank %d: %v", p.Rank, err)
		}
	}
	switch {
	case len(m.Processes) == 0:
		note = "the measurement has no per-process records (summary form)"
	case note == "":
		sum = total
	}
	return held, sum, note
}

// lewiOf is the run's LeWI record and its processes' (by rank), with their
// accounts against the CPUs held where the whole run's region has them:
// nil when LeWI was not on. The run's held accounts are the sums over all
// its processes; note says why there are none ("" with them).
func lewiOf(m *measure.Measurement) (run *measure.Lewi, ps []LewiProcess, held *HeldAccounts, note string) {
	if m.Lewi == nil {
		return nil, nil, nil, ""
	}
	byRank, held, note := heldOf(m, func(p *measure.Process) (int, measure.ProcessLewi, string, bool) {
		if p.Lewi == nil {
			return 0, measure.ProcessLewi{}, "had LeWI off", false
		}
		return cmp.Or(p.Lewi.OwnCPUs, p.AffinityCPUs), *p.Lewi, "", true
	})
	for _, p := range m.Processes {
		if p.Lewi != nil {
			ps = append(ps, LewiProcess{Rank: p.Rank, ProcessLewi: *p.Lewi, Held: byRank[p.Rank]})
		}
	}
	l := *m.Lewi
	return &l, ps, held, note
}

// DromProcess is one process's own CPUs under DROM and its accounts
// against the CPUs it held over time (docs/drom.md).
type DromProcess struct {
	Rank int
	measure.ProcessDrom
	// Held is nil where the accounts could not be set against the CPUs
	// held ([Run.DromHeldNote] says why).
	Held *HeldAccounts
}

// dromOf is, for a run where DROM changed some process's CPUs and LeWI was
// off (with LeWI on, its accounts against the CPUs held include DROM's
// changes), each registered process's own CPUs and accounts against the
// CPUs it held, the run's sums over them, and why not ("" with them); nil
// otherwise.
func dromOf(m *measure.Measurement) (ps []DromProcess, held *HeldAccounts, note string) {
	changed := false
	for _, p := range m.Processes {
		changed = changed || p.Drom != nil && p.Drom.OwnChangeCPUNS != 0
	}
	if !changed || m.Lewi != nil {
		return nil, nil, ""
	}
	zero := int64(0)
	byRank, held, note := heldOf(m, func(p *measure.Process) (int, measure.ProcessLewi, string, bool) {
		if p.Drom == nil {
			return 0, measure.ProcessLewi{}, "", false // not registered: its CPUs did not move
		}
		return p.Drom.OwnCPUs, measure.ProcessLewi{LentCallerNS: &zero, OwnChangeCPUNS: p.Drom.OwnChangeCPUNS}, "", true
	})
	for _, p := range m.Processes {
		if p.Drom != nil {
			ps = append(ps, DromProcess{Rank: p.Rank, ProcessDrom: *p.Drom, Held: byRank[p.Rank]})
		}
	}
	return ps, held, note
}
