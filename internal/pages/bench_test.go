package pages

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchRegions are the 10 regions of every benchmark run.
var benchRegions = []string{"Global", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9"}

// writeBenchRuns writes n synthetic popmon runs with 10 regions each into
// one experiment folder: 1, 2, 4 and 8 ranks in turn, a minute apart.
func writeBenchRuns(b *testing.B, dir string, n int) {
	for i := 0; i < n; i++ {
		ranks := make([]rank, 1<<(i%4))
		for k := range ranks {
			ranks[k] = rank{useful: 4 + float64(k%3), mpi: 1 + float64(i%5)/10}
		}
		m := synthRun(t0.Add(time.Duration(i)*time.Minute), 6, benchRegions, ranks...)
		writeRun(b, dir, fmt.Sprintf("run-%04d.json", i), m)
	}
}

// BenchmarkPages1000 generates the site of 1,000 runs × 10 regions, all
// regions shown (popmon pages --region … ×10).
func BenchmarkPages1000(b *testing.B) {
	in := b.TempDir()
	writeBenchRuns(b, filepath.Join(in, "exp"), 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "site")
		start := time.Now()
		res, err := Generate(Options{Input: in, Output: out, Regions: benchRegions})
		if err != nil {
			b.Fatal(err)
		}
		if res.Runs != 1000 {
			b.Fatalf("%d runs", res.Runs)
		}
		b.StopTimer()
		elapsed := time.Since(start)
		size, gz, page := 0, 0, 0
		for _, f := range res.Files {
			data, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				b.Fatal(err)
			}
			var z bytes.Buffer
			w := gzip.NewWriter(&z)
			w.Write(data)
			w.Close()
			size, gz, page = size+len(data), gz+z.Len(), max(page, len(data))
		}
		b.Logf("1000 runs × 10 regions: %v, site %d KiB (%d KiB gzipped), largest page %d KiB", elapsed, size/1024, gz/1024, page/1024)
		b.StartTimer()
	}
}
