package measure

// The per-thread accounts of a process (primary_*_ns, parallel_useful_ns,
// thread_useful_max_ns) feed the POP hybrid models. Writers omit keys whose
// value is 0, and files of older libraries lack them altogether; the
// accessors below return the value a model should use, with the fallbacks of
// docs/measurement-format.md.

// HasThreadAccounts reports whether the per-thread accounts of a are known:
// the process has one CPU (its only thread is the primary, so every
// per-thread account follows from the process accounts), or the file has
// them. A process with several CPUs that did useful work always has a
// nonzero thread_useful_max_ns, so its absence there means the writer did
// not record the per-thread accounts (a file of an older libpopmon).
func (a *ProcessAccounts) HasThreadAccounts() bool {
	return a.CPUs <= 1 || a.ThreadUsefulMaxNS > 0 || a.UsefulNS == 0
}

// PrimaryUseful returns the useful time of the primary thread: the
// primary_useful_ns key, or useful_ns for a process with one CPU when the key
// is absent. For a process with several CPUs a missing key reads as 0 (check
// [ProcessAccounts.HasThreadAccounts] first).
func (a *ProcessAccounts) PrimaryUseful() int64 {
	if a.PrimaryUsefulNS == 0 && a.CPUs <= 1 {
		return a.UsefulNS
	}
	return a.PrimaryUsefulNS
}

// PrimaryMPI returns the MPI time of the primary thread: the primary_mpi_ns
// key, or mpi_ns for a process with one CPU when the key is absent. For a
// process with several CPUs a missing key reads as 0.
func (a *ProcessAccounts) PrimaryMPI() int64 {
	if a.PrimaryMPINS == 0 && a.CPUs <= 1 {
		return a.MPINS
	}
	return a.PrimaryMPINS
}

// ThreadUsefulMax returns the largest useful time of any one thread of the
// process: the thread_useful_max_ns key, or useful_ns for a process with one
// CPU when the key is absent. For a process with several CPUs a missing key
// reads as 0.
func (a *ProcessAccounts) ThreadUsefulMax() int64 {
	if a.ThreadUsefulMaxNS == 0 && a.CPUs <= 1 {
		return a.UsefulNS
	}
	return a.ThreadUsefulMaxNS
}

// PrimarySerialUseful returns the useful time of the primary thread outside
// outermost OpenMP parallel regions: the primary_serial_useful_ns key when
// present; otherwise all of [ProcessAccounts.PrimaryUseful] when the primary
// never was inside a parallel region (primary_parallel_ns is 0); otherwise
// useful_ns − parallel_useful_ns, clamped to 0 … PrimaryUseful. The last
// case is exact under the OpenMP accounting of docs/measurement-format.md:
// outside parallel regions only the primary thread does useful work, so the
// useful time of all threads outside them is the primary's.
func (a *ProcessAccounts) PrimarySerialUseful() int64 {
	switch {
	case a.PrimarySerialUsefulNS > 0:
		return a.PrimarySerialUsefulNS
	case a.PrimaryParallelNS == 0:
		return a.PrimaryUseful()
	}
	return min(max(a.UsefulNS-a.ParallelUsefulNS, 0), a.PrimaryUseful())
}

// WithoutInstrumentation returns a as the metrics see it (POP-METRICS.md
// §1, docs/metrics.md "popmon's own cost"): popmon's own cost
// (InstrumentationNS) taken out of the run, as if the process had run for
// ElapsedNS − InstrumentationNS / CPUs, and the account itself 0. The
// other accounts are unchanged, so when a adds up (the invariant, with the
// instrumentation among the accounts) the result adds up too.
func (a ProcessAccounts) WithoutInstrumentation() ProcessAccounts {
	if a.InstrumentationNS <= 0 {
		return a
	}
	cpus := int64(max(a.CPUs, 1))
	a.ElapsedNS = max(a.ElapsedNS-(a.InstrumentationNS+cpus/2)/cpus, 0)
	a.InstrumentationNS = 0
	return a
}

// HasInstrumentation reports whether any process of m has popmon's own cost
// as an account of its own (instrumentation_ns), in the full or the summary
// form.
func (m *Measurement) HasInstrumentation() bool {
	if m == nil {
		return false
	}
	for i := range m.Regions {
		g := &m.Regions[i]
		if g.Summary != nil && g.Summary.Sum.InstrumentationNS > 0 {
			return true
		}
		for j := range g.Processes {
			if g.Processes[j].InstrumentationNS > 0 {
				return true
			}
		}
	}
	return false
}

// WithoutInstrumentation returns m with every process's accounts in the
// full form replaced by [ProcessAccounts.WithoutInstrumentation]: a copy of
// the regions (m itself is not changed), or m when no process has the
// account. Regions in the summary form are kept as they are: their
// reduced accounts cannot be taken apart per process, so their metrics
// count popmon's own cost in the elapsed time.
func (m *Measurement) WithoutInstrumentation() *Measurement {
	if !m.HasInstrumentation() {
		return m
	}
	c := *m
	c.Regions = make([]Region, len(m.Regions))
	for i, g := range m.Regions {
		if len(g.Processes) > 0 {
			ps := make([]ProcessAccounts, len(g.Processes))
			for j, p := range g.Processes {
				ps[j] = p.WithoutInstrumentation()
			}
			g.Processes = ps
		}
		c.Regions[i] = g
	}
	return &c
}
