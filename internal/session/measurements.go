package session

import (
	"path/filepath"

	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/internal/outfile"
	"github.com/popmon/popmon/measure"
)

// The measurements popmon itself writes into the session folder: the
// partial measurement of a job that did not finish (WritePartial, for
// popmon run and popmon recover), kept elsewhere when the session folder
// cannot take it (WriteKeeping), and the time series added to rank 0's
// measurement of a job that finished (AddSeries).

// WritePartial assembles the partial measurement of what s read and
// writes it as file name in dir; returns its path and command.
func WritePartial(s *live.Sampler, info Info, end live.JobEnd, by, dir string) (string, *measure.Measurement, error) {
	procs, p, err := s.Procs(end)
	if err != nil {
		return "", nil, err
	}
	p.AssembledBy = by
	m, err := live.Assemble(procs, live.Job{Command: info.Command, Cwd: info.Cwd, Launcher: info.Launcher, JobID: info.JobID, MPILibrary: info.MPILibrary}, &p)
	if err != nil {
		return "", nil, err
	}
	final, order := live.FinalOf(m)
	m.Series = s.Series(final, s.T0(), order)
	path, err := WriteKeeping(dir, "partial.json", info.LiveDir, m)
	if err != nil {
		return "", nil, err
	}
	return path, m, nil
}

// AddSeries adds the time series the sampler took to the measurement file
// at path (rank 0's, of a job that finished), rewriting it in place.
func AddSeries(s *live.Sampler, path string) error {
	m, err := measure.ReadFile(path)
	if err != nil {
		return err
	}
	final, order := live.FinalOf(m)
	if m.Series = s.Series(final, s.T0(), order); m.Series == nil {
		return nil
	}
	return outfile.WriteMeasurement(path, m)
}

// WriteKeeping writes m as dir/name (dir is the session folder); when that
// fails, it keeps m as popmon-kept-TAG-name in the first of KeptDirs that
// takes it, and returns where it went. The error is the first failure,
// when m could be kept nowhere.
func WriteKeeping(dir, name, liveDir string, m *measure.Measurement) (string, error) {
	path := filepath.Join(dir, name)
	first := outfile.WriteMeasurement(path, m)
	if first == nil {
		return path, nil
	}
	for _, d := range KeptDirs(dir, liveDir) {
		if p, err := keepIn(d, KeptName(dir, name), m); err == nil {
			return p, nil
		}
	}
	return "", first
}

// keepIn writes m into folder d as name (numbered when taken, never
// replacing anything), readable by its owner only.
func keepIn(d, name string, m *measure.Measurement) (string, error) {
	return outfile.WriteNumbered(m, filepath.Join(d, name), 0o600, ".popmon-kept-*.tmp")
}
