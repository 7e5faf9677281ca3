package runs

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// FindReference returns the index in runs of the run that ref names: its
// label (case-insensitive), its file path, or its file's base name. An
// ambiguous label (several runs share it) picks the earliest; an unknown
// ref is an error listing the labels.
func FindReference(runs []*Run, ref string) (int, error) {
	found := -1
	for i, r := range runs {
		if r.Source == ref || filepath.Clean(r.Source) == filepath.Clean(ref) || filepath.Base(r.Source) == ref {
			return i, nil
		}
		if strings.EqualFold(r.Label, ref) && (found < 0 || r.Timestamp.Before(runs[found].Timestamp)) {
			found = i
		}
	}
	if found >= 0 {
		return found, nil
	}
	labels := make([]string, 0, len(runs))
	for _, r := range runs {
		labels = append(labels, fmt.Sprintf("%q (%s)", r.Label, r.Source))
	}
	return -1, fmt.Errorf("no run %q to use as reference: give a label or a file of %s", ref, strings.Join(labels, ", "))
}

// ScalingInput builds the input of pop.Scale from runs: the regions in the
// order they first appear (Global first), or only the region called only
// when it is not empty (matched exactly: [measure.MatchRegion]); reference is an
// index in runs (negative: fewest CPUs). Run IDs are indices in runs. It
// fails when only names a region that no run has.
func ScalingInput(runs []*Run, model pop.Model, mode pop.ScalingMode, reference int, only string) (pop.ScalingInput, error) {
	in := pop.ScalingInput{Model: model, Mode: mode, Reference: reference}
	var names []string
	seen := map[string]bool{}
	for _, r := range runs {
		for _, g := range r.Regions {
			if !seen[g.Name] {
				seen[g.Name] = true
				names = append(names, g.Name)
			}
		}
	}
	if only != "" {
		match, err := measure.MatchRegion(names, only, "in any run")
		if err != nil {
			return in, err
		}
		names = []string{match}
	}
	for _, name := range names {
		reg := pop.ScalingRegionInput{Name: name}
		var trees [][]Node
		for id, r := range runs {
			g, ok := r.Region(name)
			if !ok {
				continue
			}
			reg.Runs = append(reg.Runs, pop.ScalingRun{
				ID: id, Label: r.Label, Source: r.Source, CPUs: g.CPUs, Time: r.Timestamp,
				ElapsedNS: g.ElapsedNS, UsefulNS: float64(g.UsefulNS),
				Instructions: g.Instructions, Cycles: g.Cycles, HasCounters: g.HasCounters,
				Device: g.Device, Metrics: g.Metrics, Refused: g.Refused,
			})
			trees = append(trees, g.Tree)
		}
		reg.Tree = mergeTrees(trees)
		in.Regions = append(in.Regions, reg)
	}
	return in, nil
}

// mergeTrees returns the longest tree followed by the nodes of the others
// that it lacks.
func mergeTrees(trees [][]Node) []pop.ScalingNode {
	long := 0
	for i, t := range trees {
		if len(t) > len(trees[long]) {
			long = i
		}
	}
	var out []pop.ScalingNode
	seen := map[string]bool{}
	addAll := func(t []Node) {
		for _, n := range t {
			if !seen[n.ID] {
				seen[n.ID] = true
				out = append(out, pop.ScalingNode{ID: n.ID, Name: n.Name, Depth: n.Depth})
			}
		}
	}
	if len(trees) > 0 {
		addAll(trees[long])
	}
	for _, t := range trees {
		addAll(t)
	}
	return out
}
