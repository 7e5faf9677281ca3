// Package runs reads the runs that popmon compares (scaling studies,
// regression checks): popmon measurement files and DLB/TALP JSON files
// (DLB 3.5, 3.6 and 3.7 layouts, also the talp-json popmon writes), into
// one summary model: resources, a label, git metadata and per region the
// times, counters and POP metrics by the ids of POP-METRICS.md §9.
package runs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/talpjson"
	"github.com/popmon/popmon/measure"
	"github.com/popmon/popmon/pop"
)

// Kinds of run files ([Run.Kind]).
const (
	KindPopmon  = "popmon"
	KindTALP    = "talp-json"
	KindParaver = "paraver"
)

// Run is the summary of one run, from one file.
type Run struct {
	// Source is the file the run was read from.
	Source string
	// Kind is KindPopmon, KindTALP or KindParaver.
	Kind string
	// DLBVersion is the file's "dlbVersion" (TALP files only).
	DLBVersion string
	// Timestamp is when the run ended: the file's timestamp, or the file's
	// modification time when it has none (see TimestampFromMtime).
	Timestamp time.Time
	// TimestampFromMtime says the file had no usable timestamp.
	TimestampFromMtime bool
	// Git is the run's version-control metadata (TALP's "metadata" block);
	// empty for popmon files, whose callers fill it from flags or
	// [GitFromEnv].
	Git Git
	// Resources are the run's resources.
	Resources Resources
	// Label names the resource configuration, e.g. "4xMPI 2xOpenMP"; see
	// [Resources.Label].
	Label string
	// Model is the metric model of Regions[].Metrics.
	Model pop.Model
	// Regions holds the regions, Global first.
	Regions []Region
	// Measurement is the measurement the run was summarised from
	// (popmon files and imported traces); nil for TALP files, which have
	// no per-process data.
	Measurement *measure.Measurement
	// Warnings are what a reader of the run's numbers must be told, one
	// sentence each: a trace's skipped lines, and a TALP file's load
	// balance In/Out that popmon recomputed or left out because DLB's own
	// are impossible. Commands print them with [Warning].
	Warnings []string
}

// Resources are the resources of a run.
type Resources struct {
	// MPI says the program used MPI (TALP: numMpiRanks > 0).
	MPI bool
	// Processes is the number of processes: MPI ranks, 1 without MPI.
	Processes int
	// Nodes is the number of nodes.
	Nodes int
	// CPUs is Σ CPUs of all processes.
	CPUs int
	// ThreadsPerProcess is CPUs / Processes, rounded down, at least 1.
	ThreadsPerProcess int
	// GPUs is the number of GPU devices.
	GPUs int
}

// Label names the configuration: "<P>xMPI <T>xOpenMP" with P processes
// and T = CPUs/P threads per process ("4xMPI 2xOpenMP"; T with one decimal
// when CPUs is not a multiple of P), "<T>xOpenMP" for a program without MPI
// ("1xOpenMP" for a serial run), and " <G>xGPU" appended when the run used
// GPUs.
func (r Resources) Label() string {
	p := max(r.Processes, 1)
	var threads string
	if r.CPUs%p == 0 {
		threads = fmt.Sprintf("%dxOpenMP", max(r.CPUs/p, 1))
	} else {
		threads = fmt.Sprintf("%.1fxOpenMP", float64(r.CPUs)/float64(p))
	}
	s := threads
	if r.MPI {
		s = fmt.Sprintf("%dxMPI %s", p, threads)
	}
	if r.GPUs > 0 {
		s += fmt.Sprintf(" %dxGPU", r.GPUs)
	}
	return s
}

// SameConfiguration reports whether a and b used the same resources:
// processes, nodes, CPUs and GPUs.
func (r Resources) SameConfiguration(o Resources) bool {
	return r.MPI == o.MPI && r.Processes == o.Processes && r.Nodes == o.Nodes && r.CPUs == o.CPUs && r.GPUs == o.GPUs
}

// Region is the summary of one region of a run.
type Region struct {
	// Name is the region name; the whole run is "Global" whatever the DLB
	// version called it (see [talpjson.GlobalNames]).
	Name string
	// Processes and CPUs are those that visited the region (TALP: the
	// region's numMpiRanks, 1 without MPI, and numCpus).
	Processes, CPUs int
	// ElapsedNS is T, the region's elapsed time.
	ElapsedNS int64
	// UsefulNS is ΣU over all CPUs.
	UsefulNS int64
	// MPINS is ΣM over all CPUs (TALP's mpiTime).
	MPINS int64
	// Instructions and Cycles are Σ over useful time; meaningful only
	// when HasCounters.
	Instructions, Cycles float64
	// HasCounters says the region has hardware counter data.
	HasCounters bool
	// Device are the region's device computation inputs (nil without GPU
	// devices, or refused).
	Device *pop.DeviceWork
	// Metrics are the region's metrics by id (POP-METRICS.md §9); absent
	// metrics are absent.
	Metrics map[string]float64
	// Tree lists the efficiency metrics of Metrics in tree order, with
	// their names and depths, for renderers.
	Tree []Node
	// Refused, when not empty, says why the region has no metrics: its
	// accounts do not add up (pop.RegionReport.Refused). Metrics and Tree
	// are then empty, and so are the times and counters (UsefulNS, MPINS,
	// Instructions, Cycles, HasCounters) that scaling metrics would be
	// computed from; ElapsedNS, Processes and CPUs are the file's.
	Refused string
}

// Node is one efficiency of a region's metric tree.
type Node struct {
	// ID is the metric id, Name its human label.
	ID, Name string
	// Depth is 0 for a root.
	Depth int
}

// Region returns the region called name exactly: region names are
// case-sensitive, so "global" is not "Global" and a user region "all" or
// "Anonymous Region 3" is only itself ([measure.NameIndex]).
// [measure.MatchRegion] resolves a name a user typed, with a suggestion
// when only the case differs.
func (r *Run) Region(name string) (*Region, bool) {
	i := measure.NameIndex(len(r.Regions), func(i int) string { return r.Regions[i].Name }, name)
	if i < 0 {
		return nil, false
	}
	return &r.Regions[i], true
}

// RegionNames returns the names of the run's regions, Global first.
func (r *Run) RegionNames() []string {
	names := make([]string, len(r.Regions))
	for i := range r.Regions {
		names[i] = r.Regions[i].Name
	}
	return names
}

// Load reads one run file with [Open] and summarises it with model
// (empty: talp): [File.Run]. Traces are read strictly (no malformed line
// skipped).
func Load(path string, model pop.Model) (*Run, error) {
	return LoadWith(path, model, ReadOptions{})
}

// LoadWith is [Load] with read options (--skip-bad for traces, ...).
func LoadWith(path string, model pop.Model, opt ReadOptions) (*Run, error) {
	f, err := Open(path, opt)
	if err != nil {
		return nil, err
	}
	return f.Run(model)
}

// Run summarises the file with model (empty: talp). DLB/TALP files have
// the metrics of model talp only; other models are an error. Errors name
// the file.
func (f *File) Run(model pop.Model) (*Run, error) {
	if model == "" {
		model = pop.ModelTALP
	}
	var run *Run
	switch f.Kind {
	case KindTALP:
		if model != pop.ModelTALP {
			return nil, fmt.Errorf("%s: DLB/TALP JSON has the metrics of model talp only, not %s: use --model talp, or measure with popmon run for other models", f.Path, model)
		}
		c := *f.talp
		c.Regions = append([]Region(nil), f.talp.Regions...)
		c.Warnings = nil
		if src := f.Measurement.Source; src != nil {
			for _, n := range src.Notes {
				if strings.HasPrefix(n, talpjson.NoteImpossibleLoadBalance) {
					c.Warnings = append(c.Warnings, n)
				}
			}
		}
		run = &c
	default:
		r, err := loadMeasurement(f.Path, f.Measurement, model)
		if err != nil {
			return nil, err
		}
		r.Kind = f.Kind
		if f.Kind == KindParaver {
			r.Warnings = f.Measurement.Warnings
		}
		if pa := f.Measurement.Partial; pa != nil {
			r.Warnings = append(r.Warnings, pa.Sentence())
		}
		run = r
	}
	return finishRun(f.Path, run), nil
}

// finishRun fills the timestamp from the file's modification time when the
// run has none, and the label.
func finishRun(path string, run *Run) *Run {
	if run.Timestamp.IsZero() {
		if st, err := os.Stat(path); err == nil {
			run.Timestamp = st.ModTime().UTC()
			run.TimestampFromMtime = true
		}
	}
	run.Label = run.Resources.Label()
	return run
}

// loadMeasurement summarises a measurement with model.
func loadMeasurement(path string, m *measure.Measurement, model pop.Model) (*Run, error) {
	rep, err := pop.Compute(m, model)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rep.Refused != "" {
		return nil, &FileError{Path: path, Problem: "has no trustworthy metrics: " + rep.Refused,
			Fix: "measure the job again (popmon report " + path + " shows what was measured)"}
	}
	r := &Run{Source: path, Kind: KindPopmon, Model: model, Measurement: m, Git: gitOf(m)}
	if t, err := m.Time(); err == nil {
		r.Timestamp = t.UTC()
	}
	res := m.Resources
	r.Resources = Resources{
		MPI: m.HasMPI(), Processes: max(res.Processes, 1), Nodes: res.Nodes,
		CPUs: res.CPUs, GPUs: res.GPUs,
	}
	r.Resources.ThreadsPerProcess = max(res.CPUs/r.Resources.Processes, 1)
	for i := range rep.Regions {
		g := &rep.Regions[i]
		reg := Region{
			Name: g.Name, Processes: g.Processes, CPUs: g.CPUs,
			ElapsedNS: g.ElapsedNS, UsefulNS: g.Totals.UsefulNS, MPINS: g.Totals.MPINS,
			Instructions: float64(g.Totals.Instructions), Cycles: float64(g.Totals.Cycles),
			Metrics: map[string]float64{},
		}
		reg.HasCounters = res.HardwareCounters && g.Totals.Cycles > 0
		if g.DeviceWork.Devices > 0 {
			w := g.DeviceWork
			reg.Device = &w
		}
		if g.Refused != "" {
			reg.Device = nil
			reg.Refused = g.Refused
			reg.UsefulNS, reg.MPINS, reg.Instructions, reg.Cycles, reg.HasCounters = 0, 0, 0, 0, false
		}
		for _, x := range g.Metrics {
			if !x.Measured() {
				continue
			}
			reg.Metrics[x.ID] = x.Value
			if x.Kind == pop.KindEfficiency {
				reg.Tree = append(reg.Tree, Node{ID: x.ID, Name: x.Name, Depth: x.Depth})
			}
		}
		r.Regions = append(r.Regions, reg)
	}
	return r, nil
}

// LoadAll loads every file of paths with [LoadWith]; a directory stands
// for every *.json, *.prv and *.prv.gz file below it (recursively, in name
// order). Without skipBad the first unusable file is an error; with it,
// warn gets the error (a [*FileError] naming the file) and the file is
// skipped, and traces are imported skipping malformed lines, their
// warnings passed to warn as [*Warning]s. A path that does not exist is an
// error either way. Runs come in the order of paths.
func LoadAll(paths []string, model pop.Model, skipBad bool, warn func(error)) ([]*Run, error) {
	var out []*Run
	for _, p := range paths {
		files, err := expand(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			r, err := LoadWith(f, model, ReadOptions{SkipBad: skipBad})
			if err != nil {
				if !skipBad {
					return nil, err
				}
				if warn != nil {
					warn(err)
				}
				continue
			}
			if warn != nil {
				for _, w := range r.Warnings {
					warn(&Warning{Path: f, Text: w})
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// expand returns path itself for a file, and the *.json and trace files
// below a directory.
func expand(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, statError(path, err)
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.EqualFold(filepath.Ext(p), ".json") || paraver.IsTrace(p)) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

// Git is the version-control metadata of a run (TALP's "metadata" block,
// written by `talp metadata`, or the CI environment: [GitFromEnv]).
type Git struct {
	// Commit is the commit hash.
	Commit string
	// Branch is the branch (or tag) name.
	Branch string
	// Timestamp is the commit time, as the source wrote it.
	Timestamp string
	// IsMergeRequest says the run belongs to a merge/pull request.
	IsMergeRequest bool
	// DefaultBranch is the repository's default branch.
	DefaultBranch string
}

// IsZero reports whether g holds nothing.
func (g Git) IsZero() bool { return g == Git{} }

// GitFromEnv reads the git metadata of GitHub Actions (GITHUB_SHA,
// GITHUB_REF_NAME, GITHUB_EVENT_NAME=pull_request, GITHUB_HEAD_REF for a
// pull request's branch) or GitLab CI (CI_COMMIT_SHA, CI_COMMIT_REF_NAME,
// CI_COMMIT_TIMESTAMP, CI_MERGE_REQUEST_IID, CI_DEFAULT_BRANCH) through
// getenv (os.Getenv in production). Neither: the zero Git.
func GitFromEnv(getenv func(string) string) Git {
	if getenv == nil {
		return Git{}
	}
	if sha := getenv("CI_COMMIT_SHA"); sha != "" {
		return Git{
			Commit:         sha,
			Branch:         getenv("CI_COMMIT_REF_NAME"),
			Timestamp:      getenv("CI_COMMIT_TIMESTAMP"),
			IsMergeRequest: getenv("CI_MERGE_REQUEST_IID") != "",
			DefaultBranch:  getenv("CI_DEFAULT_BRANCH"),
		}
	}
	if sha := getenv("GITHUB_SHA"); sha != "" {
		g := Git{Commit: sha, Branch: getenv("GITHUB_REF_NAME")}
		if ev := getenv("GITHUB_EVENT_NAME"); ev == "pull_request" || ev == "pull_request_target" {
			g.IsMergeRequest = true
			if h := getenv("GITHUB_HEAD_REF"); h != "" {
				g.Branch = h
			}
		}
		return g
	}
	return Git{}
}

// gitOf returns the measurement's version-control metadata.
func gitOf(m *measure.Measurement) Git {
	if m.Git == nil {
		return Git{}
	}
	return Git{Commit: m.Git.Commit, Branch: m.Git.Branch, Timestamp: m.Git.Timestamp,
		IsMergeRequest: m.Git.IsMergeRequest, DefaultBranch: m.Git.DefaultBranch}
}

// NewestLike returns the newest of all with the same resource
// configuration as nr, other than nr's own file (popmon check's baseline
// from a folder of runs); nil when there is none.
func NewestLike(all []*Run, nr *Run) *Run {
	self, _ := filepath.Abs(nr.Source)
	var best *Run
	for _, r := range all {
		if abs, _ := filepath.Abs(r.Source); abs == self {
			continue
		}
		if !r.Resources.SameConfiguration(nr.Resources) {
			continue
		}
		if best == nil || !r.Timestamp.Before(best.Timestamp) {
			best = r
		}
	}
	return best
}
