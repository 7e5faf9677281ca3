package live

import (
	"fmt"
	"runtime"
	"testing"
)

// heapMiB returns the live heap after a garbage collection, in MiB.
func heapMiB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// runSeriesJob drives a job of ranks × regions through n interval ends,
// every region of every rank visited in every interval, and builds its
// series; it returns the peak live heap (checked every `every` intervals
// and after the series is built) above the heap before the job, and the
// series' size.
func runSeriesJob(tb testing.TB, ranks, regions, n, every int) (peak float64, intervals, nregions, entries int) {
	base := heapMiB()
	j := newSeriesJob(tb, ranks, regions, false)
	for k := range n {
		for r := range ranks {
			for i := 1; i < regions; i++ {
				j.add(r, i, 1000+uint64(r), 500+uint64(i%7))
			}
		}
		j.sample()
		if (k+1)%every == 0 {
			peak = max(peak, heapMiB()-base)
		}
	}
	final, order := j.final(tb)
	s := j.s.Series(final, j.s.T0(), order)
	peak = max(peak, heapMiB()-base)
	if s == nil {
		tb.Fatal("no series")
	}
	for _, g := range s.Regions {
		for _, iv := range g.Intervals {
			entries += len(iv.Processes)
		}
	}
	runtime.KeepAlive(s)
	return peak, len(s.Regions[0].Intervals), len(s.Regions), entries
}

// BenchmarkSeriesMemory: 8 ranks × 4096 regions (Global and 4095) through
// 60, 600 and 3,600 interval ends (a minute, 10 minutes and an hour of
// popmon run), every region's accounts changing in every interval: the
// live heap's peak. scripts/bench-series.sh reports it.
func BenchmarkSeriesMemory(b *testing.B) {
	for _, n := range []int{60, 600, 3600} {
		b.Run(fmt.Sprintf("intervals=%d", n), func(b *testing.B) {
			var peak float64
			var ivs, regs, entries int
			for range b.N {
				peak, ivs, regs, entries = runSeriesJob(b, 8, 4096, n, 50)
			}
			b.ReportMetric(peak, "peak-heap-MiB")
			b.ReportMetric(float64(ivs), "intervals")
			b.ReportMetric(float64(regs), "regions")
			b.ReportMetric(float64(entries), "entries")
		})
	}
}
