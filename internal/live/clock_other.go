//go:build !amd64

package live

func rdtsc() uint64 { return 0 }

const haveTSC = false
