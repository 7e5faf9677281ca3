package live

// rdtsc reads the time-stamp counter, the clock libpopmon uses on x86-64
// when it is invariant (the same on every core of a node).
func rdtsc() uint64

const haveTSC = true
