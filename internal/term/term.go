// Package term is popmon's side of the terminal: whether an output is
// one (IsTerminal), keys read one by one (RawMode, ReadKeys, for popmon
// top), whether popmon is in the terminal's foreground (InForeground, for
// popmon run's signal forwarding), and a progress line (Progress).
package term

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// ReadKeys sends the bytes read from in to keys until it fails.
func ReadKeys(in io.Reader, keys chan<- byte) {
	b := make([]byte, 1)
	for {
		n, err := in.Read(b)
		if err != nil {
			return
		}
		if n == 1 {
			keys <- b[0]
		}
	}
}

// InForeground reports whether popmon's process group is the
// foreground group of its controlling terminal: then a SIGINT or SIGQUIT
// it got most likely came from the keyboard and reached the job too.
func InForeground() bool {
	for _, fd := range []uintptr{0, 1, 2} {
		var pgrp int32
		_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCGPGRP), uintptr(unsafe.Pointer(&pgrp)))
		if errno == 0 {
			return int(pgrp) == syscall.Getpgrp()
		}
	}
	return false
}

// NewProgress returns the progress line of reading name to w, started now.
func NewProgress(w io.Writer, name string) *Progress {
	return &Progress{w: w, name: name, start: time.Now()}
}

// Progress draws "importing NAME  42%  123 MB/s" on a terminal, at most
// ten times a second (popmon's imports of large traces).
type Progress struct {
	w     io.Writer
	name  string
	start time.Time
	last  time.Time
	drawn bool
}

// Update draws the bytes read so far of size, when it is time to.
func (p *Progress) Update(read, size int64) {
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond || now.Sub(p.start) < 500*time.Millisecond {
		return // nothing for short imports, and no flicker
	}
	p.last = now
	pct := 0.0
	if size > 0 {
		pct = 100 * float64(read) / float64(size)
	}
	rate := float64(read) / 1e6 / now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\rimporting %s  %3.0f%%  %.0f MB/s of file\x1b[K", p.name, pct, rate)
	p.drawn = true
}

// Clear erases the line, if it was drawn.
func (p *Progress) Clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
