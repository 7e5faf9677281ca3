//go:build !linux

package cli

// probeCounters: hardware counters need Linux's perf_event interface.
func probeCounters() counterProbe {
	return counterProbe{reason: "counters unavailable: perf_event needs Linux"}
}
