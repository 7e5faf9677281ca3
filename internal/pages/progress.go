package pages

import (
	"fmt"
	"io"
	"sync"
)

// progressMin is the number of steps below which no progress is shown:
// short work finishes before a progress line would help.
const progressMin = 50

// progress prints "reading 1000 files… 50%" on one terminal line, updated
// when the percentage changes. A nil writer (or little work) prints
// nothing.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	what  string
	total int
	done  int
	last  int
}

func newProgress(w io.Writer, what string, total int) *progress {
	if total < progressMin {
		w = nil
	}
	return &progress{w: w, what: what, total: total, last: -1}
}

// step records one more unit of work.
func (p *progress) step() {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	pct := p.done * 100 / p.total
	if pct != p.last {
		p.last = pct
		fmt.Fprintf(p.w, "\r%s… %d%%", p.what, pct)
	}
}

// finish ends the progress line.
func (p *progress) finish() {
	if p == nil || p.w == nil {
		return
	}
	fmt.Fprintf(p.w, "\r%s… done\n", p.what)
}
