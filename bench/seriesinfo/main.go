// Command seriesinfo prints the time series of a measurement file: the
// Global region's intervals, the regions in the series and the process
// entries (scripts/bench-series.sh).
//
//	seriesinfo FILE
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: seriesinfo FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	var m struct {
		Series *struct {
			IntervalNS int64 `json:"interval_ns"`
			Regions    []struct {
				Name      string `json:"name"`
				Intervals []struct {
					Processes []struct{} `json:"processes"`
				} `json:"intervals"`
			} `json:"regions"`
		} `json:"series"`
	}
	if err := json.NewDecoder(f).Decode(&m); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if m.Series == nil || len(m.Series.Regions) == 0 {
		fmt.Println("0 0 0 0")
		return
	}
	entries := 0
	for _, r := range m.Series.Regions {
		for _, iv := range r.Intervals {
			entries += len(iv.Processes)
		}
	}
	fmt.Println(len(m.Series.Regions[0].Intervals), len(m.Series.Regions), entries, m.Series.IntervalNS)
}
