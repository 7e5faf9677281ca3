package paraver

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// epoch16Text returns the .prv text of the 16-rank EPOCH trace.
func epoch16Text(b *testing.B) []byte {
	b.Helper()
	f, err := os.Open("testdata/epoch_16proc.prv.gz")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		b.Fatal(err)
	}
	return text
}

// BenchmarkImport measures import throughput on the 16-rank EPOCH trace
// held in memory (no disk, no decompression): MB/s of .prv text.
func BenchmarkImport(b *testing.B) {
	text := epoch16Text(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Import(bytes.NewReader(text), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImportWithTrace is BenchmarkImport building the in-memory trace
// in the same pass (what popmon import does for the replay).
func BenchmarkImportWithTrace(b *testing.B) {
	text := epoch16Text(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, im, err := run(bytes.NewReader(text), Options{buildTrace: true})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := im.tb.finish(im); err != nil {
			b.Fatal(err)
		}
	}
}
