package liveapi

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/popmon/popmon/internal/live"
	"github.com/popmon/popmon/internal/outfile"
)

// MinHistory is the least history a service keeps: windows up to 60 s can
// be asked for.
const MinHistory = 60 * time.Second

// Config configures a Service.
type Config struct {
	// Source returns the job's latest snapshots (live.Sampler.Latest,
	// after a Sample when the service owns the sampler).
	Source func() []*live.Snapshot
	// Every is the interval between views (the "last interval" window).
	Every time.Duration
	Job   live.Job
	Info  Info
	// Windows are the windows computed at every view besides the run
	// (the window labels of the _ratio gauges).
	Windows []time.Duration
	// PerRank exports the accounts per rank instead of per node.
	PerRank bool
	// Textfile, when not empty, is a folder where every view is written
	// as popmon_<session>.prom (temp file + rename), removed by Close.
	Textfile string
}

// Service samples a job every interval into a history, keeps the latest
// view, and publishes it (HTTP, textfile).
type Service struct {
	cfg  Config
	hist *live.History
	mu   sync.Mutex
	view *live.View
	err  error
	srv  *http.Server
	ln   net.Listener
	stop chan struct{}
	done chan struct{}
}

// NewService returns a service; Tick or Start make its views.
func NewService(cfg Config) *Service {
	keep := MinHistory
	for _, w := range cfg.Windows {
		keep = max(keep, w)
	}
	if cfg.Every <= 0 {
		cfg.Every = time.Second
	}
	return &Service{cfg: cfg, hist: live.NewHistory(keep + cfg.Every)}
}

// Tick takes a sample and computes the view (and writes the textfile).
func (s *Service) Tick() (*live.View, error) {
	s.hist.Add(s.cfg.Source())
	v, err := s.hist.View(s.cfg.Job, s.cfg.Windows...)
	s.mu.Lock()
	if err == nil {
		s.view = v
	}
	s.err = err
	s.mu.Unlock()
	if err == nil && s.cfg.Textfile != "" {
		if werr := s.writeTextfile(v); werr != nil {
			return v, werr
		}
	}
	return v, err
}

// View returns the latest view, or why there is none.
func (s *Service) View() (*live.View, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.view == nil {
		if s.err == nil {
			return nil, errors.New("no sample of the job yet")
		}
		return nil, s.err
	}
	return s.view, nil
}

// Start ticks every interval in the background until Close; errors of the
// textfile go to warn, once per distinct message.
func (s *Service) Start(warn func(error)) {
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.cfg.Every)
		defer t.Stop()
		last := ""
		for {
			if _, err := s.Tick(); err != nil && s.cfg.Textfile != "" && warn != nil && err.Error() != last && isWriteError(err) {
				last = err.Error()
				warn(err)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
}

type writeError struct{ error }

func isWriteError(err error) bool {
	var w writeError
	return errors.As(err, &w)
}

// Listen serves the view over HTTP on addr (host:port; port 0 picks one)
// and returns the address bound.
func (s *Service) Listen(addr string) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return ln.Addr(), nil
}

// Close stops the ticks and the HTTP server and removes the textfile.
func (s *Service) Close() {
	if s.stop != nil {
		close(s.stop)
		<-s.done
		s.stop = nil
	}
	if s.srv != nil {
		s.srv.Close()
	}
	if s.cfg.Textfile != "" {
		os.Remove(s.textfilePath())
	}
}

func (s *Service) textfilePath() string {
	return filepath.Join(s.cfg.Textfile, "popmon_"+s.cfg.Info.Session+".prom")
}

// writeTextfile writes v where node_exporter's textfile collector reads
// it: a temporary file (a name the collector ignores) renamed over the
// final one, so that a scrape never sees half a file.
func (s *Service) writeTextfile(v *live.View) error {
	var b bytes.Buffer
	if err := WriteMetrics(&b, v, s.cfg.Info, s.cfg.PerRank); err != nil {
		return writeError{err}
	}
	final := s.textfilePath()
	tmp := filepath.Join(s.cfg.Textfile, ".popmon_"+s.cfg.Info.Session+".prom.tmp")
	if err := outfile.WriteAtomicVia(tmp, final, b.Bytes()); err != nil {
		return writeError{fmt.Errorf("--prom-textfile: %w", err)}
	}
	return nil
}
