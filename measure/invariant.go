package measure

import (
	"fmt"
	"math"
)

// The accounts invariant of POP-METRICS.md §1: while a region is open, every
// CPU of a process is in exactly one state, so a process's accounts in a
// region add up to its elapsed time × its CPUs:
//
//	useful + mpi + mpi_worker_idle + omp_serialization + omp_load_imbalance
//	  + omp_scheduling + gpu_runtime + other + instrumentation = elapsed × cpus
//
// A measurement that breaks it by more than [InvariantTolerance] (plus
// [InvariantSlackNS] per CPU for clock granularity) was measured or
// converted wrongly, and its efficiencies cannot be trusted.

// InvariantTolerance is the relative difference between a process's
// accounts and elapsed × CPUs above which [CheckAccounts] reports a
// violation.
const InvariantTolerance = 0.01

// InvariantSlackNS is the absolute difference per CPU, in ns, that
// [CheckAccounts] always allows (clock granularity and the few ns between
// reading the clock for two accounts).
const InvariantSlackNS = 1000

// AccountViolation is one place where the accounts break the invariant: a
// process in a region, or (Rank −1) the totals of a region of a measurement
// converted from DLB/TALP JSON, whose per-process accounts are synthesized.
type AccountViolation struct {
	// Region is the region's name.
	Region string
	// Rank is the process; −1 for the region's totals over all processes.
	Rank int
	// CPUs is the process's CPUs (Σ CPUs for the totals).
	CPUs int
	// ElapsedNS is the process's elapsed time (the region's elapsed time,
	// the largest of its processes', for the totals).
	ElapsedNS int64
	// AccountsNS is the sum of the process's accounts (of all processes'
	// accounts for the totals), saturated at math.MaxInt64.
	AccountsNS int64
}

// ExpectedNS returns elapsed × CPUs, saturated at math.MaxInt64.
func (v AccountViolation) ExpectedNS() int64 {
	return satInt(float64(v.ElapsedNS) * float64(v.CPUs))
}

// Deviation returns (accounts − elapsed × CPUs) / (elapsed × CPUs): +0.1
// means the accounts hold 10 % more time than the CPUs had; +Inf when the
// process has accounts but no elapsed time.
func (v AccountViolation) Deviation() float64 {
	exp := float64(v.ElapsedNS) * float64(v.CPUs)
	if exp <= 0 {
		return math.Inf(1)
	}
	return (float64(v.AccountsNS) - exp) / exp
}

// String describes the violation in one sentence, for a report's warning
// line.
func (v AccountViolation) String() string {
	dev := v.Deviation()
	amount := "more"
	if dev < 0 {
		amount, dev = "less", -dev
	}
	pct := "∞"
	if !math.IsInf(dev, 0) {
		pct = fmt.Sprintf("%.1f %%", 100*dev)
	}
	if v.Rank < 0 {
		return fmt.Sprintf("region %q: the accounts of all processes add up to %.6f s, %s %s than elapsed × CPUs (%.6f s × %d): the file's times count some CPU time twice",
			v.Region, seconds(v.AccountsNS), pct, amount, seconds(v.ElapsedNS), v.CPUs)
	}
	return fmt.Sprintf("region %q, rank %d: the accounts add up to %.6f s, %s %s than elapsed × CPUs (%.6f s × %d)",
		v.Region, v.Rank, seconds(v.AccountsNS), pct, amount, seconds(v.ElapsedNS), v.CPUs)
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// AccountsNS returns the sum of a's time accounts: useful, MPI, MPI worker
// idle, the three OpenMP accounts, GPU runtime, other time and popmon's
// own cost (instrumentation), saturated
// at math.MaxInt64.
func (a *ProcessAccounts) AccountsNS() int64 {
	return satInt(a.accounts())
}

func (a *ProcessAccounts) accounts() float64 {
	return float64(a.UsefulNS) + float64(a.MPINS) + float64(a.MPIWorkerIdleNS) +
		float64(a.OMPSerializationNS) + float64(a.OMPLoadImbalanceNS) + float64(a.OMPSchedulingNS) +
		float64(a.GPURuntimeNS) + float64(a.OtherNS) + float64(a.InstrumentationNS)
}

// CheckAccounts returns the places where m breaks the accounts invariant
// of POP-METRICS.md §1 by more than [InvariantTolerance] of elapsed × CPUs
// plus [InvariantSlackNS] per CPU, in region and rank order; nil when
// there are none.
//
// Every process of every region is checked, except in a measurement
// converted from DLB/TALP JSON (Source.Kind [SourceTALP]): its per-process
// accounts are synthesized from per-region sums over processes whose own
// elapsed times TALP does not record, so only the totals can be checked,
// and only from above: Σ accounts ≤ T × Σ CPUs, with T the region's
// elapsed time (a process that ends earlier has fewer accounts). DLB
// 3.6.2–3.7.0 break that bound when OpenMP workers idle while their
// primary thread is in MPI: they count that time in both mpiTime and
// ompSerializationTime.
func CheckAccounts(m *Measurement) []AccountViolation {
	if m == nil {
		return nil
	}
	talp := m.Source != nil && m.Source.Kind == SourceTALP
	var out []AccountViolation
	for gi := range m.Regions {
		g := &m.Regions[gi]
		if talp {
			var sum float64
			var cpus int
			var elapsed int64
			for i := range g.Processes {
				a := &g.Processes[i]
				sum += a.accounts()
				cpus += max(a.CPUs, 0)
				elapsed = max(elapsed, a.ElapsedNS)
			}
			exp := float64(elapsed) * float64(cpus)
			if sum-exp > limit(exp, cpus) {
				out = append(out, AccountViolation{Region: g.Name, Rank: -1, CPUs: cpus, ElapsedNS: elapsed, AccountsNS: satInt(sum)})
			}
			continue
		}
		for i := range g.Processes {
			a := &g.Processes[i]
			sum := a.accounts()
			if !AddsUp(sum, float64(a.ElapsedNS), a.CPUs) {
				out = append(out, AccountViolation{Region: g.Name, Rank: a.Rank, CPUs: a.CPUs, ElapsedNS: a.ElapsedNS, AccountsNS: satInt(sum)})
			}
		}
	}
	return out
}

// AddsUp reports whether accounts (ns) equal elapsed (ns) × cpus within
// the tolerance of [CheckAccounts]: [InvariantTolerance] of elapsed × cpus
// plus [InvariantSlackNS] per CPU.
func AddsUp(accounts, elapsed float64, cpus int) bool {
	exp := elapsed * float64(cpus)
	return math.Abs(accounts-exp) <= limit(exp, cpus)
}

// limit is the largest difference CheckAccounts accepts for elapsed × CPUs
// exp.
func limit(exp float64, cpus int) float64 {
	return InvariantTolerance*math.Abs(exp) + InvariantSlackNS*float64(max(cpus, 1))
}

// satInt converts a non-negative float64 to int64, saturating.
func satInt(v float64) int64 {
	switch {
	case math.IsNaN(v) || v <= 0:
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(v)
}
