package measure_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/popmon/popmon/measure"
)

// invMeasurement is a valid measurement with region "R" holding accounts.
func invMeasurement(accounts ...measure.ProcessAccounts) *measure.Measurement {
	m := &measure.Measurement{
		Format: measure.Format, Version: measure.Version, Tool: measure.Tool{Name: "popmon", Version: "t"},
		Timestamp: "2025-01-01T00:00:00Z", Command: []string{"a"}, Launcher: measure.Launcher{Kind: measure.LauncherNone},
		Clock: measure.Clock{Source: measure.ClockMonotonic}, MPICalls: []measure.MPICall{}, Warnings: []string{},
	}
	for i := range accounts {
		accounts[i].Rank = i
		accounts[i].Visits = 1
		m.Processes = append(m.Processes, measure.Process{Rank: i, CPUs: accounts[i].CPUs})
		m.Resources.CPUs += accounts[i].CPUs
	}
	m.Resources.Processes = len(accounts)
	m.Resources.Nodes = 1
	m.Regions = []measure.Region{{Name: measure.GlobalRegion, Processes: accounts}, {Name: "R", Processes: accounts}}
	return m
}

func TestCheckAccounts(t *testing.T) {
	const ms = int64(1_000_000)
	tests := []struct {
		name    string
		acc     []measure.ProcessAccounts
		talp    bool
		ranks   []int     // violating ranks per region (each of the two regions)
		devs    []float64 // their deviations
		message string    // part of the first violation's String
	}{
		{name: "exact", acc: []measure.ProcessAccounts{
			{CPUs: 2, ElapsedNS: 200 * ms, UsefulNS: 200 * ms, MPINS: 100 * ms, MPIWorkerIdleNS: 100 * ms},
			{CPUs: 2, ElapsedNS: 200 * ms, UsefulNS: 400 * ms},
		}},
		{name: "every account counts", acc: []measure.ProcessAccounts{
			{CPUs: 4, ElapsedNS: 100 * ms, UsefulNS: 100 * ms, MPINS: 50 * ms, MPIWorkerIdleNS: 50 * ms, OMPSerializationNS: 50 * ms,
				OMPLoadImbalanceNS: 50 * ms, OMPSchedulingNS: 25 * ms, GPURuntimeNS: 25 * ms, OtherNS: 50 * ms},
		}},
		{name: "within 1 %", acc: []measure.ProcessAccounts{
			{CPUs: 1, ElapsedNS: 1000 * ms, UsefulNS: 990 * ms},
			{CPUs: 1, ElapsedNS: 1000 * ms, UsefulNS: 1009 * ms},
		}},
		{name: "clock slack on a tiny region", acc: []measure.ProcessAccounts{
			{CPUs: 4, ElapsedNS: 1000, UsefulNS: 4000 + 3900},
		}},
		{
			// The num_threads case when only 1 of 3 idle CPUs is charged
			// (issue 10): 100 ms serial, then 100 ms in 4 threads.
			name: "idle CPUs not charged", acc: []measure.ProcessAccounts{
				{CPUs: 4, ElapsedNS: 200 * ms, UsefulNS: 500 * ms, OMPSerializationNS: 100 * ms},
			},
			ranks: []int{0}, devs: []float64{-0.25}, message: `region "Global", rank 0: the accounts add up to 0.600000 s, 25.0 % less than elapsed × CPUs (0.200000 s × 4)`,
		},
		{
			// Mw counted on top of Iser: 5 % too much on rank 1.
			name: "double counting", acc: []measure.ProcessAccounts{
				{CPUs: 2, ElapsedNS: 1000 * ms, UsefulNS: 2000 * ms},
				{CPUs: 2, ElapsedNS: 1000 * ms, UsefulNS: 1800 * ms, MPINS: 100 * ms, MPIWorkerIdleNS: 100 * ms, OMPSerializationNS: 100 * ms},
			},
			ranks: []int{1}, devs: []float64{0.05}, message: "5.0 % more",
		},
		{name: "accounts without elapsed time", acc: []measure.ProcessAccounts{
			{CPUs: 1, UsefulNS: 5 * ms},
		}, ranks: []int{0}, devs: []float64{math.Inf(1)}, message: "∞ more"},
		{
			// TALP: only the totals, only from above. Rank 1 ends
			// earlier (fewer accounts): fine.
			name: "TALP totals below", talp: true, acc: []measure.ProcessAccounts{
				{CPUs: 2, ElapsedNS: 1000 * ms, UsefulNS: 2500 * ms},
				{CPUs: 2, ElapsedNS: 1000 * ms, UsefulNS: 1000 * ms},
			},
		},
		{
			name: "TALP totals above", talp: true, acc: []measure.ProcessAccounts{
				{CPUs: 2, ElapsedNS: 1000 * ms, UsefulNS: 2000 * ms, MPINS: 200 * ms, OMPSerializationNS: 100 * ms},
				{CPUs: 2, ElapsedNS: 1000 * ms, UsefulNS: 2000 * ms},
			},
			ranks: []int{-1}, devs: []float64{0.075}, message: "the accounts of all processes add up to 4.300000 s, 7.5 % more than elapsed × CPUs (1.000000 s × 4)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := invMeasurement(tt.acc...)
			if tt.talp {
				m.Source = &measure.Source{Kind: measure.SourceTALP, Path: "x.json"}
			}
			got := measure.CheckAccounts(m)
			if len(got) != 2*len(tt.ranks) {
				t.Fatalf("violations = %v, want ranks %v in both regions", got, tt.ranks)
			}
			for k, v := range got {
				i := k % len(tt.ranks)
				region := []string{measure.GlobalRegion, "R"}[k/len(tt.ranks)]
				if v.Region != region || v.Rank != tt.ranks[i] {
					t.Errorf("violation %d = %+v, want region %s rank %d", k, v, region, tt.ranks[i])
				}
				if d := v.Deviation(); math.Abs(d-tt.devs[i]) > 1e-9 && !(math.IsInf(d, 1) && math.IsInf(tt.devs[i], 1)) {
					t.Errorf("deviation = %v, want %v", d, tt.devs[i])
				}
			}
			if len(got) > 0 && !strings.Contains(got[0].String(), tt.message) {
				t.Errorf("String() = %q, want it to contain %q", got[0].String(), tt.message)
			}

			// The reader records the same violations.
			var buf bytes.Buffer
			if err := measure.Write(&buf, m); err != nil {
				t.Fatal(err)
			}
			r, err := measure.Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.AccountViolations) != len(got) {
				t.Errorf("Read recorded %v, CheckAccounts %v", r.AccountViolations, got)
			}
		})
	}
}

func TestCheckAccountsSaturates(t *testing.T) {
	m := invMeasurement(measure.ProcessAccounts{CPUs: 1, ElapsedNS: 1, UsefulNS: math.MaxInt64, MPINS: math.MaxInt64})
	v := measure.CheckAccounts(m)
	if len(v) != 2 || v[0].AccountsNS != math.MaxInt64 || v[0].ExpectedNS() != 1 {
		t.Errorf("violations = %+v", v)
	}
	if measure.CheckAccounts(nil) != nil {
		t.Error("CheckAccounts(nil) is not nil")
	}
}

func TestAccountsNS(t *testing.T) {
	a := measure.ProcessAccounts{UsefulNS: 1, MPINS: 2, MPIWorkerIdleNS: 4, OMPSerializationNS: 8, OMPLoadImbalanceNS: 16,
		OMPSchedulingNS: 32, GPURuntimeNS: 64, OtherNS: 128, PrimaryUsefulNS: 1000, Cycles: 1000}
	if got := a.AccountsNS(); got != 255 {
		t.Errorf("AccountsNS = %d, want 255 (primary keys and counters are not accounts)", got)
	}
}
