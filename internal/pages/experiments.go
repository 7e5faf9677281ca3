package pages

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/popmon/popmon/internal/paraver"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/internal/safetext"
	"github.com/popmon/popmon/pop"
)

// Experiment is one folder of run files (the talp-pages convention: every
// folder that directly holds *.json files — or Paraver traces, *.prv and
// *.prv.gz, which are imported as popmon scaling imports them — is one
// experiment).
type Experiment struct {
	// Name is the folder relative to the input, with "/" separators; the
	// input folder itself is named by its base name.
	Name string
	// Slug is the experiment's folder name in the site.
	Slug string
	// Files are the run files, sorted.
	Files []string
	// Runs are the runs read, in evolution order (see sortRuns).
	Runs []*runs.Run
	// ByCommit says every run has a git commit, so evolution plots are
	// drawn over commits rather than time.
	ByCommit bool
}

// Newest returns the newest run (the last in evolution order).
func (e *Experiment) Newest() *runs.Run {
	if len(e.Runs) == 0 {
		return nil
	}
	return e.Runs[len(e.Runs)-1]
}

// Discover finds the experiments below dir: every folder (dir included)
// that directly holds *.json files or Paraver traces, skipping the folder skip (the site
// being written, when it lies below dir) and hidden folders. Experiments
// come sorted by name.
func Discover(dir, skip string) ([]*Experiment, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("input %s is not a folder: popmon pages reads a folder of run folders", dir)
	}
	skipAbs := ""
	if skip != "" {
		skipAbs, _ = filepath.Abs(skip)
	}
	byDir := map[string][]string{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("input: %w", err)
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if skipAbs != "" {
				if a, _ := filepath.Abs(p); a == skipAbs {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if strings.EqualFold(filepath.Ext(p), ".json") || paraver.IsTrace(p) {
			byDir[filepath.Dir(p)] = append(byDir[filepath.Dir(p)], p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []*Experiment
	for d, files := range byDir {
		rel, err := filepath.Rel(dir, d)
		if err != nil || rel == "." {
			abs, _ := filepath.Abs(dir)
			rel = filepath.Base(abs)
		}
		sort.Strings(files)
		out = append(out, &Experiment{Name: filepath.ToSlash(rel), Files: files})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	used := map[string]bool{"index.html": true, "badge.svg": true} // the site root's files
	for _, e := range out {
		e.Slug = uniqueSlug(slug(e.Name), used)
	}
	return out, nil
}

// slug turns a name into a safe folder name: lower-case letters, digits,
// '-', '_' and '.', other runs of characters become '-'.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-.")
	if s == "" {
		s = "experiment"
	}
	return s
}

func uniqueSlug(s string, used map[string]bool) string {
	out := s
	for i := 2; used[out]; i++ {
		out = fmt.Sprintf("%s-%d", s, i)
	}
	used[out] = true
	return out
}

// loadExperiments reads the run files of exps in parallel. A bad file is
// an error naming it, unless read.SkipBad: then warn gets the error and the
// file is left out. Experiments left without runs are dropped (with a
// warning).
func loadExperiments(exps []*Experiment, model pop.Model, read runs.ReadOptions, warn func(error), prog *progress) ([]*Experiment, int, error) {
	type job struct{ e, f int }
	var jobs []job
	for i, e := range exps {
		for j := range e.Files {
			jobs = append(jobs, job{i, j})
		}
	}
	results := make([][]*runs.Run, len(exps))
	errs := make([][]error, len(exps))
	for i, e := range exps {
		results[i] = make([]*runs.Run, len(e.Files))
		errs[i] = make([]error, len(e.Files))
	}
	ch := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				r, err := runs.LoadWith(exps[j.e].Files[j.f], model, read)
				results[j.e][j.f], errs[j.e][j.f] = r, err
				prog.step()
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	prog.finish()

	skipped := 0
	var out []*Experiment
	for i, e := range exps {
		for j, err := range errs[i] {
			if err == nil {
				r := results[i][j]
				if warn != nil {
					for _, w := range r.Warnings {
						warn(&runs.Warning{Path: r.Source, Text: w})
					}
				}
				e.Runs = append(e.Runs, r)
				continue
			}
			if !read.SkipBad {
				return nil, 0, fmt.Errorf("%w (use --skip-bad to leave bad files out)", err)
			}
			skipped++
			if warn != nil {
				warn(err)
			}
		}
		if len(e.Runs) == 0 {
			if warn != nil {
				warn(fmt.Errorf("experiment %s: no readable runs, left out", safetext.Text(e.Name)))
			}
			continue
		}
		sortRuns(e)
		out = append(out, e)
	}
	return out, skipped, nil
}

// sortRuns orders the runs of e for evolution plots: by time, then file
// name. Time is the run's timestamp; e.ByCommit is set when every run has
// a git commit.
func sortRuns(e *Experiment) {
	e.ByCommit = true
	for _, r := range e.Runs {
		if r.Git.Commit == "" {
			e.ByCommit = false
		}
	}
	sort.SliceStable(e.Runs, func(i, j int) bool {
		a, b := e.Runs[i], e.Runs[j]
		if !a.Timestamp.Equal(b.Timestamp) {
			return a.Timestamp.Before(b.Timestamp)
		}
		return a.Source < b.Source
	})
}
