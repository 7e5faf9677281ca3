package live

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/popmon/popmon/measure"
)

// Proc is one process in an assembly: a snapshot of its live file, the
// tick of its own clock where its measurement ends, and how it ended.
type Proc struct {
	Snap *Snapshot
	// Final is the process's last snapshot (how it ended); Snap may be an
	// earlier one, taken at the cut.
	Final *Snapshot
	// Cut is where the process's measurement ends (its clock's tick).
	Cut uint64
	// End says how the process ended (measure.ProcessEnd.End).
	End string
	// ValidUntil is the last tick its accounts are known for.
	ValidUntil uint64
	// goneSeen is when popmon run first found the process no longer
	// alive (CLOCK_MONOTONIC ns, 0 when it never did: recover, another
	// node's process).
	goneSeen int64
	// endSignal is the signal that ended the process as popmon run saw
	// it (the command itself), when its live file recorded none.
	endSignal int
}

// Job describes the job around the processes.
type Job struct {
	Command    []string // the measured command, when the files do not name it
	Cwd        string
	Launcher   string // measure.Launcher* kind
	JobID      string // the launcher's job id (Slurm's), when known
	MPILibrary string // what the library was built against ("MPICH (MPI 4.0)")
	Ranks      int    // the job's size, when known (else the processes' MPI size)
}

// Assemble builds the measurement of procs, cut where each Proc says, as
// the partial measurement p (whose CutNS, Ranks, Included, MissingRanks and
// Ends it fills), or, with p nil, as the run so far of a job still running
// (popmon top). The accounts are the ones libpopmon keeps: an open region
// is closed at the cut, as MPI_Finalize would have closed it.
func Assemble(procs []Proc, job Job, pp *measure.Partial) (*measure.Measurement, error) {
	var p measure.Partial
	if pp != nil {
		p = *pp
	}
	if len(procs) == 0 {
		return nil, fmt.Errorf("no process left a live file")
	}
	procs = append([]Proc(nil), procs...)
	sort.Slice(procs, func(i, j int) bool { return procs[i].Snap.Rank < procs[j].Snap.Rank })
	m, t0 := assembleHeader(procs, job)
	if err := assembleProcesses(m, procs, job.Ranks, &p, t0); err != nil {
		return nil, err
	}
	if pp != nil {
		m.Version, m.Partial = 3, &p
	}
	assembleRegions(m, procs)
	assembleRuntimes(m, procs)
	if m.Partial != nil {
		m.Warnings = []string{p.Sentence()}
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("assembling the measurement from the live files: %w", err)
	}
	m.Violations() // derived once, here, for pop and the reports
	return m, nil
}

// assembleHeader returns the measurement of procs (in rank order) with its
// header (tool, time, command, launcher, MPI, clock), and the time its
// times are relative to: the earliest MPI_Init (or start, for a process
// without MPI).
func assembleHeader(procs []Proc, job Job) (*measure.Measurement, int64) {
	var t0 int64 = math.MaxInt64
	for _, pr := range procs {
		s := pr.Snap
		start := s.InitTick
		if start == 0 {
			start = s.T0Tick
		}
		if ns := s.NSAt(start); ns < t0 {
			t0 = ns
		}
	}
	first := procs[0].Snap
	m := &measure.Measurement{
		Format:    measure.Format,
		Version:   1,
		Tool:      measure.Tool{Name: "libpopmon", Version: "assembled by popmon"},
		Timestamp: time.Unix(0, int64(first.EpochNS)).UTC().Format(time.RFC3339),
		Command:   first.Command,
		Cwd:       job.Cwd,
		Launcher:  measure.Launcher{Kind: job.Launcher, JobID: job.JobID},
		MPI:       &measure.MPI{Library: job.MPILibrary, Standard: "", ThreadLevel: "unknown"},
		Clock:     measure.Clock{Source: measure.ClockMonotonic},
	}
	if len(m.Command) == 0 {
		m.Command = job.Command
	}
	if first.ClockTSC {
		m.Clock.Source = measure.ClockTSC
	}
	return m, t0
}

// assembleProcesses fills m's processes and resources from procs, and p's
// cut, ends, size (at least jobRanks) and missing ranks; times relative to
// t0. It fails for two live files of one rank.
func assembleProcesses(m *measure.Measurement, procs []Proc, jobRanks int, p *measure.Partial, t0 int64) error {
	nodes := map[string]int{}
	ranks := map[int]bool{}
	size := jobRanks
	for _, pr := range procs {
		s := pr.Snap
		if ranks[s.Rank] {
			return fmt.Errorf("two live files of rank %d (pids %d and others): mixed jobs in one live folder", s.Rank, s.PID)
		}
		ranks[s.Rank] = true
		if _, ok := nodes[s.Host]; !ok {
			nodes[s.Host] = len(nodes)
		}
		if s.Size > size {
			size = s.Size
		}
		m.Processes = append(m.Processes, measure.Process{Rank: s.Rank, Node: nodes[s.Host], Hostname: s.Host, PID: s.PID, CPUs: s.AccountCPUs,
			AffinityCPUs: s.AffinityCPUs, Lewi: pr.Lewi(), Drom: pr.Drom()})
		if l := m.Processes[len(m.Processes)-1].Lewi; l != nil {
			if m.Lewi == nil {
				m.Lewi = &measure.Lewi{}
			}
			m.Lewi.Processes++
			m.Lewi.LentCPUNS += l.LentCPUNS
			m.Lewi.BorrowedCPUNS += l.BorrowedCPUNS
		}
		m.Resources.CPUs += s.AccountCPUs
		cut := s.NSAt(pr.Cut) - t0
		if cut > p.CutNS {
			p.CutNS = cut
		}
		p.Ends = append(p.Ends, measure.ProcessEnd{Rank: s.Rank, End: pr.End, ValidUntilNS: s.NSAt(pr.ValidUntil) - t0})
	}
	m.Resources.Processes = len(procs)
	m.Resources.Nodes = len(nodes)
	if size < len(procs) {
		size = len(procs)
	}
	p.Ranks, p.Included = size, len(procs)
	var missing []int
	for r := 0; r < size; r++ {
		if !ranks[r] {
			missing = append(missing, r)
		}
	}
	p.MissingRanks = rankRanges(missing)
	p.CutNS = max(p.CutNS, 0)
	return nil
}

// assembleRegions adds the regions of procs at their cuts to m, in the
// order the lowest rank created them (the first always, the others where
// a process visited them), with the GPU devices' accounts.
func assembleRegions(m *measure.Measurement, procs []Proc) {
	var names []string
	seen := map[string]bool{}
	for _, pr := range procs {
		for _, r := range pr.Snap.Regions {
			if !seen[r.Name] {
				seen[r.Name] = true
				names = append(names, r.Name)
			}
		}
	}
	devs, devIdx := gpuDevicesOf(procs)
	for ri, name := range names {
		g := measure.Region{Name: name}
		for pi, pr := range procs {
			s := pr.Snap
			idx := -1
			for k := range s.Regions {
				if s.Regions[k].Name == name {
					idx = k
					break
				}
			}
			if idx < 0 {
				continue
			}
			r := s.RegionAt(idx, pr.Cut)
			if r.Visits == 0 {
				continue
			}
			pa := accountsOf(s, r)
			pa.GPUDevices = gpuAccountsOf(r, devIdx[pi])
			g.Processes = append(g.Processes, pa)
		}
		if len(g.Processes) > 0 || ri == 0 {
			m.Regions = append(m.Regions, g)
		}
	}
	m.GPUDevices = devs
	if len(devs) > 0 {
		m.Resources.GPUs = len(devs)
	}
}

// assembleRuntimes adds what procs say about the runtimes at their cuts:
// the MPI call profile, the OpenMP constructs, the GPU and the hardware
// counters (the regions' counts cleared where they were not measured).
func assembleRuntimes(m *measure.Measurement, procs []Proc) {
	snaps := make([]*Snapshot, len(procs))
	for i, pr := range procs {
		snaps[i] = pr.Snap
	}
	m.MPICalls = CallProfile(snaps)
	m.OMPRegions = ompRegions(procs)
	if len(m.OMPRegions) > 0 {
		maxCPUs := 1
		for _, pr := range procs {
			maxCPUs = max(maxCPUs, pr.Snap.AccountCPUs)
		}
		m.OpenMP = &measure.OpenMP{Runtime: "measured (the live files do not name the runtime, nor whether OMPT or GOMP interposition measured it)", OMPT: true, MaxThreads: maxCPUs}
	}
	m.GPU = gpuOf(procs)
	m.Counters = counters(procs)
	if m.Counters != nil {
		m.Resources.HardwareCounters = m.Counters.Available
	}
	if !m.Resources.HardwareCounters {
		for i := range m.Regions {
			for k := range m.Regions[i].Processes {
				m.Regions[i].Processes[k].Cycles, m.Regions[i].Processes[k].Instructions = 0, 0
			}
		}
	}
}

// ompRegions merges the processes' OpenMP constructs by module and
// address (the same code in every process), as libpopmon's finalize does,
// in nanoseconds of each process's clock.
func ompRegions(procs []Proc) []measure.OMPRegion {
	type key struct {
		module string
		addr   uint64
	}
	var out []measure.OMPRegion
	at := map[key]int{}
	for _, pr := range procs {
		s := pr.Snap
		r := s.NSPerTick()
		ns := func(t uint64) int64 { return int64(float64(t)*r + 0.5) }
		for _, c := range s.Constructs {
			k := key{c.Module, c.Address}
			i, ok := at[k]
			if !ok {
				i = len(out)
				at[k] = i
				out = append(out, measure.OMPRegion{Module: c.Module, Address: c.Address})
			}
			o := &out[i]
			o.Executions += int64(c.Executions)
			o.Threads = max(o.Threads, int(min(c.Threads, 1<<20)))
			o.WallNS += ns(c.Wall)
			o.UsefulNS += ns(c.Useful)
			o.ImbalanceNS += ns(c.Imbalance)
			o.SynchronizationNS += ns(c.Sync)
			o.LimitedParallelismNS += ns(c.Limited)
			o.ThreadManagementNS += ns(c.Mgmt)
		}
	}
	return out
}

// gpuDevicesOf merges the processes' GPU devices by UUID, as libpopmon's
// finalize does: the run's devices, and per process each device ordinal's
// index among them (-1: not used).
func gpuDevicesOf(procs []Proc) ([]measure.GPUDevice, [][gpuDevices]int) {
	var devs []measure.GPUDevice
	at := map[string]int{}
	idx := make([][gpuDevices]int, len(procs))
	for pi, pr := range procs {
		g := pr.Snap.GPU
		for d := range idx[pi] {
			idx[pi][d] = -1
			if !g.Active || g.Used&(1<<d) == 0 {
				continue
			}
			uuid := g.UUID[d]
			if uuid == "" {
				uuid = "GPU-ordinal-" + strconv.Itoa(d) // no device map (as the library writes it)
			}
			i, ok := at[uuid]
			if !ok {
				i = len(devs)
				at[uuid] = i
				devs = append(devs, measure.GPUDevice{Index: i, UUID: uuid, Vendor: g.Vendor})
			}
			idx[pi][d] = i
		}
	}
	return devs, idx
}

// gpuAccountsOf is region r's device time on each device the process used
// (run-wide indices idx), as shim/output.c writes it.
func gpuAccountsOf(r Region, idx [gpuDevices]int) []measure.GPUDeviceAccount {
	var out []measure.GPUDeviceAccount
	for d, i := range idx {
		if i < 0 {
			continue
		}
		k, a := int64(min(r.Tot.GPUK[d], math.MaxInt64)), int64(min(r.Tot.GPUA[d], math.MaxInt64))
		out = append(out, measure.GPUDeviceAccount{Device: i, UsefulNS: k, ActiveNS: max(a, k)})
	}
	return out
}

// gpuMethods are the "gpu" object's methods by the vendor of the backend
// that measured.
var gpuMethods = map[string]string{measure.GPUVendorNVIDIA: measure.GPUMethodCUPTI, measure.GPUVendorAMD: measure.GPUMethodROCprofilerSDK}

// gpuOf says what the processes said of GPU measurement: nil when no
// process initialised CUDA or HIP with the library in place (the live
// files do not say why; the measurement of a finished run does). The
// method is that of the first process, in rank order, that measured (as
// the library's finalize writes it).
func gpuOf(procs []Proc) *measure.GPU {
	var g *measure.GPU
	for _, pr := range procs {
		st := pr.Snap.GPU
		if st.Mode == "" {
			continue
		}
		if g == nil {
			g = &measure.GPU{Mode: st.Mode, Available: true}
		}
		if st.Active && g.Available && g.Method == "" {
			g.Method = gpuMethods[st.Vendor]
		}
		if !st.Active && g.Available {
			g.Available, g.Method = false, ""
			g.Reason = "a GPU runtime (CUDA or HIP) was used but could not be measured in some process (its reason is written at finalize, which this partial measurement lacks)"
			if st.Mode == "off" {
				g.Reason = "GPU measurement is off (--gpu off or POPMON_GPU=off); use --gpu auto to measure it"
			}
		}
	}
	return g
}

// counters says what the processes said of their hardware counters:
// available only when every process measured them; nil when no process
// said anything (a live file of an older library).
func counters(procs []Proc) *measure.Counters {
	var c *measure.Counters
	for _, pr := range procs {
		st := pr.Snap.Counters
		if st.Mode == "" {
			continue
		}
		if c == nil {
			c = &measure.Counters{Mode: st.Mode, Available: true, Method: st.Method}
		}
		if !st.Available && c.Available {
			c.Available, c.Method, c.Reason = false, "", st.Reason
		}
	}
	if c != nil && !c.Available && c.Reason == "" {
		c.Reason = "counters unavailable"
	}
	return c
}

// accountsOf converts region r of process s to nanoseconds, as libpopmon's
// output does (shim/output.c).
func accountsOf(s *Snapshot, r Region) measure.ProcessAccounts {
	k := s.NSPerTick()
	ns := func(t uint64) int64 { return int64(float64(t)*k + 0.5) }
	a := r.Tot
	serial := ns(a.PrimUseful) - ns(a.X[xParSelfUseful])
	if serial < 0 {
		serial = 0
	}
	pa := measure.ProcessAccounts{
		Rank: s.Rank, CPUs: s.AccountCPUs, Visits: int64(r.Visits), ElapsedNS: ns(r.Elapsed),
		UsefulNS: ns(a.T[stUseful]), MPINS: ns(a.T[stMPI]), MPIWorkerIdleNS: ns(a.T[stMPIWorkerIdle]),
		OMPSerializationNS: ns(a.T[stOMPSerialization]), OMPLoadImbalanceNS: ns(a.T[stOMPLoadImbalance]),
		OMPSchedulingNS: ns(a.T[stOMPScheduling]), GPURuntimeNS: ns(a.T[stGPURuntime]),
		MPICalls: int64(a.MPICalls), OMPParallels: int64(a.OMPParallels), OMPTasks: int64(a.OMPTasks),
		GPURuntimeCalls: int64(a.GPUCalls),
		PrimaryUsefulNS: ns(a.PrimUseful), PrimaryMPINS: ns(a.PrimMPI), PrimarySerialUsefulNS: serial,
		PrimaryParallelNS: ns(a.X[xParWall]), ParallelUsefulNS: ns(a.X[xParUseful]),
		ThreadUsefulMaxNS: ns(a.ThrUsefulMax),
	}
	if s.Counters.Available && len(a.Ctr) >= 2 {
		pa.Cycles, pa.Instructions = int64(a.Ctr[ctrCycles]), int64(a.Ctr[ctrInstructions])
	}
	return pa
}

// rankRanges writes sorted ranks as "0-2,5".
func rankRanges(r []int) string {
	var parts []string
	for i := 0; i < len(r); {
		j := i
		for j+1 < len(r) && r[j+1] == r[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(r[i]))
		} else {
			parts = append(parts, strconv.Itoa(r[i])+"-"+strconv.Itoa(r[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// CallProfile returns the MPI call profile of the snapshots: per function,
// the calls and time summed over the processes, and the least and most
// time of one process.
func CallProfile(snaps []*Snapshot) []measure.MPICall {
	type fnAcc struct {
		calls, ns, minNS, maxNS int64
		maxRank                 int
		seen                    bool
		sent, recv              int64
		hist                    []int64
	}
	var fns []fnAcc
	var fnNames []string
	var out []measure.MPICall
	for _, s := range snaps {
		if len(s.FnNames) > len(fnNames) {
			fnNames = s.FnNames
		}
		r := s.NSPerTick()
		var calls, ticks []uint64
		for _, t := range s.Threads {
			if calls == nil {
				calls, ticks = make([]uint64, len(t.FnCalls)), make([]uint64, len(t.FnTicks))
			}
			for k := range t.FnCalls {
				if k < len(calls) {
					calls[k] += t.FnCalls[k]
					ticks[k] += t.FnTicks[k]
				}
			}
		}
		for len(fns) < len(calls) {
			fns = append(fns, fnAcc{})
		}
		for k := range calls {
			if calls[k] == 0 {
				continue
			}
			ns := int64(float64(ticks[k])*r + 0.5)
			f := &fns[k]
			f.calls += int64(calls[k])
			f.ns += ns
			if !f.seen || ns < f.minNS {
				f.minNS = ns
			}
			if !f.seen || ns > f.maxNS {
				f.maxNS, f.maxRank = ns, s.Rank
			}
			f.seen = true
		}
		// Bytes of the calls that start transfers, by their function id
		// (an id beyond the function table is skipped).
		for _, t := range s.Threads {
			for d, fn := range s.DfnFn {
				k := int(fn)
				if k >= len(fns) || 2*d+1 >= len(t.DBytes) || (d+1)*s.SizeBins > len(t.DHist) {
					continue
				}
				f := &fns[k]
				f.sent += int64(t.DBytes[2*d])
				f.recv += int64(t.DBytes[2*d+1])
				if f.hist == nil {
					f.hist = make([]int64, s.SizeBins)
				}
				for b := 0; b < s.SizeBins && b < len(f.hist); b++ {
					f.hist[b] += int64(t.DHist[d*s.SizeBins+b])
				}
			}
		}
	}
	for k, f := range fns {
		if !f.seen || k >= len(fnNames) {
			continue
		}
		out = append(out, measure.MPICall{Name: fnNames[k], Calls: f.calls, TimeNS: f.ns, MinTimeNS: f.minNS, MaxTimeNS: f.maxNS, MaxRank: f.maxRank,
			BytesSent: f.sent, BytesRecv: f.recv, SizeHist: trimHist(f.hist)})
	}
	return out
}

// trimHist drops a histogram's trailing empty buckets (nil when all are).
func trimHist(h []int64) []int64 {
	for len(h) > 0 && h[len(h)-1] == 0 {
		h = h[:len(h)-1]
	}
	if len(h) == 0 {
		return nil
	}
	return h
}

// Lewi is the process's LeWI record up to its cut: its own CPUs' change
// extended from their last change to the cut (nil without LeWI).
func (pr Proc) Lewi() *measure.ProcessLewi {
	s := pr.Snap
	if s.Lewi == nil {
		return nil
	}
	l := *s.Lewi
	l.OwnChangeCPUNS = int64(float64(s.LewiOwn.ChangeTicks(pr.Cut)) * s.NSPerTick())
	return &l
}

// Drom is the process's own CPUs under DROM up to its cut (nil when it did
// not register).
func (pr Proc) Drom() *measure.ProcessDrom {
	s := pr.Snap
	if s.Drom == nil {
		return nil
	}
	return &measure.ProcessDrom{OwnCPUs: s.Drom.Registered,
		OwnChangeCPUNS: int64(float64(s.Drom.ChangeTicks(pr.Cut)) * s.NSPerTick())}
}
