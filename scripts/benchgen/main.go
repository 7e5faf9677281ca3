// Command benchgen writes a synthetic measurement of P ranks × R regions for
// scripts/bench-finalize.sh: the full form (every process's record of every
// region) or the summary form (measure.Summarize's, built region by region so
// that its memory does not grow with P × R).
//
//	go run ./scripts/benchgen -ranks 100000 -regions 100 -form summary -o FILE
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand"
	"os"

	"github.com/popmon/popmon/measure"
)

func main() {
	ranks := flag.Int("ranks", 1000, "MPI ranks")
	regions := flag.Int("regions", 100, "regions (Global and R−1 others)")
	form := flag.String("form", "summary", "full or summary")
	out := flag.String("o", "", "file to write")
	flag.Parse()
	if err := run(*ranks, *regions, *form, *out); err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
}

func run(ranks, regions int, form, out string) error {
	if ranks < 1 || regions < 1 || out == "" || (form != "full" && form != "summary") {
		return fmt.Errorf("want -ranks ≥ 1, -regions ≥ 1, -form full|summary and -o FILE")
	}
	const perNode = 64
	m := &measure.Measurement{
		Tool: measure.Tool{Name: "popmon", Version: "0.1.0"}, Timestamp: "2026-11-24T00:00:00Z",
		Command: []string{"synthetic"}, Launcher: measure.Launcher{Kind: measure.LauncherOpenMPI},
		MPI:       &measure.MPI{Library: "synthetic", Standard: "3.1", ThreadLevel: "single"},
		Clock:     measure.Clock{Source: measure.ClockTSC},
		Resources: measure.Resources{Processes: ranks, Nodes: (ranks + perNode - 1) / perNode, CPUs: ranks},
		Warnings:  []string{},
	}
	procs := make([]measure.Process, ranks)
	for r := range procs {
		procs[r] = measure.Process{Rank: r, Node: r / perNode, Hostname: fmt.Sprintf("n%d", r/perNode), PID: 1000 + r, CPUs: 1}
	}
	m.Processes = procs
	nodeOf := m.NodeOf()
	rng := rand.New(rand.NewSource(1))
	region := func(i int) measure.Region {
		name := measure.GlobalRegion
		if i > 0 {
			name = fmt.Sprintf("region_%03d", i)
		}
		g := measure.Region{Name: name, Processes: make([]measure.ProcessAccounts, ranks)}
		for r := range g.Processes {
			e := int64(1e9)
			u := e/2 + rng.Int63n(e/2)
			g.Processes[r] = measure.ProcessAccounts{Rank: r, CPUs: 1, Visits: 1, ElapsedNS: e, UsefulNS: u, MPINS: e - u, MPICalls: 100}
		}
		return g
	}
	m.Regions = make([]measure.Region, regions)
	if form == "full" {
		for i := range m.Regions {
			m.Regions[i] = region(i)
		}
	} else {
		for i := range m.Regions {
			g := region(i)
			s := g.Aggregates(nodeOf)
			m.Regions[i] = measure.Region{Name: g.Name, Summary: &s}
		}
		m.Processes = nil
		m.Summarized = &measure.Summarized{Processes: ranks, Limit: measure.DefaultProcessRecordLimit}
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("create %s: %w", out, err)
	}
	w := bufio.NewWriter(f)
	if err := measure.Write(w, m); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", out, err)
	}
	return f.Close()
}
