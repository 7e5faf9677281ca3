package runs

import (
	"fmt"
	"strings"

	"github.com/popmon/popmon/internal/model"
	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/trace"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// ModelPoints returns the inputs of model.Fit for one region of a scaling
// study: one point per run of g (the region's table from pop.Scale of
// [ScalingInput] of runs), with the run's efficiencies and the scalability
// factors relative to g's reference, and — for runs read from
// measurements or traces — each process's useful time, the MPI call
// profile and the regions as candidate kernels (the call profile and the
// other regions only for the Global region, where they belong). A run
// whose region is refused (its accounts do not add up: [Region.Refused])
// gives no point. It also returns the factors in the table's order, for
// model.Options.Factors.
func ModelPoints(runs []*Run, g *pop.ScalingRegion) ([]model.Point, []model.FactorInfo) {
	var factors []model.FactorInfo
	for _, row := range g.Rows {
		if row.Kind == pop.KindEfficiency && row.ID != pop.IDSpeedupEfficiency {
			factors = append(factors, model.FactorInfo{ID: row.ID, Name: row.Name, Depth: row.Depth})
		}
	}
	pts := make([]model.Point, 0, len(g.Runs))
	for i, sr := range g.Runs {
		if sr.Refused != "" {
			continue // no number from accounts that do not add up
		}
		p := model.Point{CPUs: sr.CPUs, Label: sr.Label, Source: sr.Source, Reference: i == g.Reference,
			ElapsedS: float64(sr.ElapsedNS) / 1e9, UsefulS: sr.UsefulNS / 1e9,
			Instructions: sr.Instructions, Cycles: sr.Cycles, HasCounters: sr.HasCounters,
			Factors: map[string]float64{}, Processes: 1}
		for _, row := range g.Rows {
			if v, ok := row.Value(i); ok && row.Kind == pop.KindEfficiency && row.ID != pop.IDSpeedupEfficiency {
				p.Factors[row.ID] = v
			}
		}
		if sr.ID >= 0 && sr.ID < len(runs) {
			r := runs[sr.ID]
			if reg, ok := r.Region(g.Name); ok {
				p.Processes = max(reg.Processes, 1)
			}
			if m := r.Measurement; m != nil {
				addMeasurement(&p, m, g.Name)
			}
		}
		if p.CPUs > 0 {
			p.Parts = append([]model.Part{{Kind: model.PartUseful, Name: "useful computation", PerProcessS: p.UsefulS / float64(p.CPUs)}}, p.Parts...)
		}
		pts = append(pts, p)
	}
	return pts, factors
}

// addMeasurement adds what only a measurement has: the largest useful time
// of a process per CPU, and for the Global region the MPI call profile
// and the other regions' time per process.
func addMeasurement(p *model.Point, m *measure.Measurement, region string) {
	for _, reg := range m.Regions {
		if reg.Name != region {
			continue
		}
		for _, pa := range reg.Processes {
			if pa.CPUs > 0 {
				p.UsefulMaxS = max(p.UsefulMaxS, float64(pa.UsefulNS)/float64(pa.CPUs)/1e9)
			}
		}
	}
	if region != measure.GlobalRegion {
		return
	}
	procs := float64(max(p.Processes, 1))
	for _, reg := range m.Regions {
		if reg.Name == measure.GlobalRegion {
			continue
		}
		var e int64
		for _, pa := range reg.Processes {
			e += pa.ElapsedNS
		}
		p.Parts = append(p.Parts, model.Part{Kind: model.PartRegion, Name: reg.Name, PerProcessS: float64(e) / 1e9 / procs})
	}
	for _, c := range m.MPICalls {
		p.Calls = append(p.Calls, model.Call{Name: c.Name, Calls: c.Calls, TimeS: float64(c.TimeNS) / 1e9, BytesSent: c.BytesSent, BytesRecv: c.BytesRecv})
		p.Parts = append(p.Parts, model.Part{Kind: model.PartMPI, Name: c.Name, PerProcessS: float64(c.TimeNS) / 1e9 / procs})
	}
}

// AddTraceSamples reads the event trace of every point's run that has one
// — a Paraver trace (paraver.ReadTrace) or a popmon run recorded with
// --trace (trace.ReadDir of the measurement's trace folder) — and sets
// the point's model.TraceSamples, for the communication fits. It returns
// one sentence per trace that could not be read (the fits then fall back
// to the call profile).
func AddTraceSamples(pts []model.Point, runs []*Run, opt ReadOptions) []string {
	bySource := map[string]*Run{}
	for _, r := range runs {
		bySource[r.Source] = r
	}
	failed := map[string][]string{}
	var order []string
	for i := range pts {
		r := bySource[pts[i].Source]
		if r == nil {
			continue
		}
		var tr *trace.Trace
		var err error
		switch {
		case r.Kind == KindParaver:
			tr, err = paraver.ReadTrace(r.Source, paraver.Options{SkipBad: opt.SkipBad, App: opt.App, ToolVersion: opt.ToolVersion})
		case TraceDir(r.Source, r.Measurement) != "":
			tr, err = trace.ReadDir(TraceDir(r.Source, r.Measurement))
		default:
			continue
		}
		if err != nil {
			msg := err.Error()
			if _, ok := failed[msg]; !ok {
				order = append(order, msg)
			}
			failed[msg] = append(failed[msg], r.Source)
			continue
		}
		s := model.SamplesFromTrace(tr)
		pts[i].Trace = &s
	}
	var notes []string
	for _, msg := range order {
		notes = append(notes, fmt.Sprintf("the traces of %s were not read for the communication fits (%s)", strings.Join(failed[msg], ", "), msg))
	}
	return notes
}

// FitReference is the index of the reference run of popmon model's fits:
// the smallest run with region name that is fitted (its CPUs are not
// among held, the runs left out), so that the scalability factors are
// relative to a run the fits see; -1 when there is none.
func FitReference(runs []*Run, name string, held []int) int {
	out := map[int]bool{}
	for _, h := range held {
		out[h] = true
	}
	ref, refCPUs := -1, 0
	for i, r := range runs {
		if g, ok := r.Region(name); ok && !out[g.CPUs] && (ref < 0 || g.CPUs < refCPUs) {
			ref, refCPUs = i, g.CPUs
		}
	}
	return ref
}
