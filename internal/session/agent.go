package session

import (
	"errors"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/popmon/popmon/internal/live"
)

// The node agent (popmon agent LIVE_DIR SESSION, not a user command, RunAgent): on a
// node other than popmon run's, the library's first process starts it
// (shim/live.c) when it creates the node's live folder. It copies every live
// file of the folder into the session folder, SESSION/nodes/HOST/, every
// agentEvery and at once when a process changes state, ends or gets
// SIGTERM, so that popmon run and popmon recover read every node's ranks.
// When every process of the node has ended and its last copy is written, it
// removes the node's live folder and exits; also when the session folder
// disappears (popmon run has finished) or after agentMaxLife.

// agentEvery is the copy interval: what a node loses at most when its
// memory is wiped after an unwarned SIGKILL of the job.
const agentEvery = time.Second

// agentPoll is how often the agent looks at the processes' state words and
// whether they still run.
const agentPoll = 100 * time.Millisecond

// agentMaxLife ends an agent whose processes never end (a guard).
const agentMaxLife = 14 * 24 * time.Hour

// agentIdle ends an agent that never finds a live file.
const agentIdle = 30 * time.Second

// agentLock is the lock file of a node's live folder: the agent holds it
// (inherited from the process that started it) while it runs.
const agentLock = "agent.lock"

// agentFile is one live file the agent copies.
type agentFile struct {
	f         *live.File
	state     live.State
	alive     bool
	lastCopy  time.Time
	seq       uint64
	done      bool // the process ended and its last copy is written
	pid       int
	startTime uint64
}

// RunAgent runs the agent on the node's live folder dir for the session
// folder session, until it is done; its stdio is /dev/null and nobody
// waits for it, so it reports nothing.
func RunAgent(dir, session string) {
	syscall.Setsid() // already a session leader when the library could ask for it
	host, _ := os.Hostname()
	host = live.HostName(host)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	files := map[string]*agentFile{}
	start := time.Now()
	dst := live.CopyDir(session, host)
	for {
		now := time.Now()
		if _, err := os.Stat(session); err != nil || now.Sub(start) > agentMaxLife {
			break // popmon run has finished (or the guard)
		}
		flush := false
		select {
		case <-term:
			flush = true // the batch system ends the job: copy everything now
		default:
		}
		names, _ := filepath.Glob(filepath.Join(dir, "*.live"))
		for _, n := range names {
			if files[n] != nil {
				continue
			}
			f, err := live.Open(n)
			if err != nil {
				continue // not ready yet
			}
			pid, st, _ := f.Process()
			files[n] = &agentFile{f: f, pid: pid, startTime: st, state: f.State(), alive: true}
		}
		active := 0
		for n, a := range files {
			if a.done {
				continue
			}
			active++
			state, alive := a.f.State(), live.Alive(a.pid, a.startTime)
			if !flush && state == a.state && alive == a.alive && now.Sub(a.lastCopy) < agentEvery {
				continue
			}
			if err := copyLive(a, n, dst); err != nil {
				continue // the next poll tries again
			}
			// Copied after the process was gone: the copy is final.
			a.state, a.alive, a.done = state, alive, !alive
		}
		if active == 0 && len(files) > 0 || len(files) == 0 && now.Sub(start) > agentIdle {
			if removeNodeDir(dir, files) {
				break
			}
		}
		time.Sleep(agentPoll)
	}
	if _, err := os.Stat(session); err != nil {
		// popmon run has finished: the files of the processes that
		// ended are of no more use.
		for _, a := range files {
			a.done = a.done || !live.Alive(a.pid, a.startTime)
		}
		removeNodeDir(dir, files)
	}
	for _, a := range files {
		a.f.Close()
	}
}

// copyLive writes the copy of live file n (the agent's a) into dst.
func copyLive(a *agentFile, n, dst string) error {
	a.lastCopy = time.Now() // a copy that fails is tried again at the next interval or state change
	for _, d := range []string{filepath.Dir(dst), dst} {
		// Mkdir, not MkdirAll: a session folder that is gone stays gone.
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	err := a.f.WriteCopy(filepath.Join(dst, filepath.Base(n)), agentEvery, a.seq, func() bool { return live.Alive(a.pid, a.startTime) })
	if err == nil {
		a.seq++
	}
	return err
}

// removeNodeDir removes the node's live folder once its processes have
// ended and been copied: their files, the lock, the folder. False when a
// new live file appeared meanwhile (the agent goes on).
func removeNodeDir(dir string, files map[string]*agentFile) bool {
	for n, a := range files {
		if a.done {
			os.Remove(n)
		}
	}
	os.Remove(filepath.Join(dir, agentLock))
	err := os.Remove(dir)
	return err == nil || errors.Is(err, fs.ErrNotExist)
}
