// Command lewitrace breaks down where the time of examples/lewi's
// lewi_imbalance goes under --lewi, from the trace of a run (popmon run
// --trace --lewi -- mpirun -np 2 … lewi_imbalance ITERS REGIONS ITEMS 2):
// per iteration, rank 0's first REGIONS regions run alone while rank 1
// works; once rank 1 has waited in MPI_Allreduce and lent its CPU, rank 0's
// next regions run on two CPUs. It prints the 1-CPU and the 2-CPU regions'
// mean lengths, how often rank 0's first region after rank 1's work began
// before the lend reached it (a miss: that region runs on one CPU), and the
// iteration's length in 1-CPU regions, whose ratio to the plain run's
// 2·REGIONS is what --lewi can give (scripts/bench-lewi.sh; BENCHMARKS.md).
//
//	lewitrace [-regions N] TRACE_DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/popmon/popmon/internal/trace"
)

func main() {
	regions := flag.Int("regions", 10, "rank 1's parallel regions per iteration (lewi_imbalance's REGIONS)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: lewitrace [-regions N] TRACE_DIR")
		os.Exit(2)
	}
	tr, err := trace.ReadDir(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "lewitrace:", err)
		os.Exit(1)
	}
	if len(tr.Ranks) != 2 {
		fmt.Fprintf(os.Stderr, "lewitrace: %d ranks, want 2\n", len(tr.Ranks))
		os.Exit(1)
	}
	b, err := breakdown(tr, *regions)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lewitrace:", err)
		os.Exit(1)
	}
	fmt.Printf("iterations %d  rank 0's regions on 1 CPU %.0f µs, on 2 CPUs %.0f µs (%.3f)  rank 1's %.0f µs\n",
		b.iters, b.one/1e3, b.two/1e3, b.two/b.one, b.r1/1e3)
	fmt.Printf("misses %d (%.0f %%): rank 0's next region starts %.0f µs after rank 1 enters MPI_Allreduce (median); rank 1 leaves it %.0f µs after rank 0\n",
		b.misses, 100*float64(b.misses)/float64(b.iters), b.lead/1e3, b.lag/1e3)
	fmt.Printf("iteration %.2f regions on 1 CPU: %.3f of the plain run's %d\n", b.units, b.units/float64(2**regions), 2**regions)
}

type result struct {
	iters, misses int
	one, two      float64 // mean region lengths (ns) on 1 and on 2 CPUs
	lag           float64 // mean of rank 1's Allreduce end − rank 0's
	r1            float64 // rank 1's mean region length (ns)
	lead          float64 // median of rank 0's region after rank 1's work − rank 1's Allreduce entry
	units         float64 // mean iteration length in 1-CPU regions
}

type span struct{ enter, leave int64 }

// primary returns the rank's outermost parallel regions of its primary
// thread and its MPI_Allreduce calls, in time order.
func primary(r trace.Rank) (regs, ars []span) {
	for _, s := range r.Spans {
		if s.Kind == "omp" && s.Thread == 0 {
			regs = append(regs, span{s.Enter, s.Leave})
		}
	}
	for _, c := range r.Calls {
		if c.Name == "MPI_Allreduce" {
			ars = append(ars, span{c.Enter, c.Leave})
		}
	}
	sort.Slice(regs, func(i, j int) bool { return regs[i].enter < regs[j].enter })
	return regs, ars
}

func within(regs []span, from, to int64) []span {
	var out []span
	for _, r := range regs {
		if r.enter >= from && r.enter < to {
			out = append(out, r)
		}
	}
	return out
}

// breakdown skips the first iteration (the runtime's threads start there).
func breakdown(tr *trace.Trace, n int) (result, error) {
	r0, a0 := primary(tr.Ranks[0])
	r1, a1 := primary(tr.Ranks[1])
	if len(a0) != len(a1) || len(a0) < 3 {
		return result{}, fmt.Errorf("MPI_Allreduce calls: rank 0 %d, rank 1 %d", len(a0), len(a1))
	}
	var res result
	var ones, twos, r1s []float64
	var lag, units float64
	var leads []float64
	for i := 1; i < len(a0); i++ {
		it0 := within(r0, a0[i-1].leave, a0[i].enter)
		it1 := within(r1, a1[i-1].leave, a1[i].enter)
		if len(it0) != 2*n || len(it1) != n {
			return result{}, fmt.Errorf("iteration %d: %d and %d regions, want %d and %d", i, len(it0), len(it1), 2*n, n)
		}
		for _, r := range it1 {
			r1s = append(r1s, float64(r.leave-r.enter))
		}
		var d1 float64
		for _, r := range it0[:n] {
			d1 += float64(r.leave - r.enter)
			ones = append(ones, float64(r.leave-r.enter))
		}
		d1 /= float64(n)
		// The regions after rank 1's work: one that lasts as a 1-CPU one
		// ran before the lend reached it.
		for k, r := range it0[n:] {
			d := float64(r.leave - r.enter)
			if d > 0.75*d1 {
				if k == 0 {
					res.misses++
				}
				ones = append(ones, d)
				continue
			}
			twos = append(twos, d)
		}
		lag += float64(a1[i-1].leave - a0[i-1].leave)
		leads = append(leads, float64(it0[n].enter-a1[i].enter))
		units += float64(a0[i].leave-a0[i-1].leave) / d1
		res.iters++
	}
	res.one, res.two, res.r1 = mean(ones), mean(twos), mean(r1s)
	res.lag = lag / float64(res.iters)
	sort.Float64s(leads)
	res.lead = leads[len(leads)/2]
	res.units = units / float64(res.iters)
	return res, nil
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
