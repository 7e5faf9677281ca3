// Command gentrace writes a large Paraver trace for benchmarks by
// replicating the body of a real one with shifted times:
//
//	go run ./bench/gentrace -o /tmp/big.prv -size 1.1e9 internal/paraver/testdata/epoch_16proc.prv.gz
//
// Copy k of the body is shifted by k × the source's duration (states,
// events and both ends of communications), and the header's end time is
// the sum, so the result is a valid, time-sorted trace of the same
// processes whose metrics equal the source's. The .pcf and .row of the
// source are copied next to the output. With -z the output is gzipped.
package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/popmon/popmon/internal/paraver"
)

func main() {
	out := flag.String("o", "", "output trace (required)")
	size := flag.Float64("size", 1.1e9, "stop after this many bytes of .prv text")
	gz := flag.Bool("z", false, "gzip the output")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gentrace -o OUT.prv[.gz] [-size BYTES] [-z] SOURCE.prv[.gz]")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out, int64(*size), *gz); err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(1)
	}
}

func run(src, out string, size int64, gz bool) error {
	header, comms, body, err := readSource(src)
	if err != nil {
		return err
	}
	_, err = paraver.ParseHeader(header)
	if err != nil {
		return err
	}
	if len(body) == 0 {
		return errors.New("the source trace has no records")
	}
	// The header's end time in the file's own unit.
	colon := strings.Index(header, "):")
	rest := header[colon+2:]
	endField := rest[:strings.IndexByte(rest, ':')]
	unitSuffix := ""
	if i := strings.IndexByte(endField, '_'); i >= 0 {
		unitSuffix = endField[i:]
		endField = endField[:i]
	}
	dur, err := strconv.ParseInt(endField, 10, 64)
	if err != nil {
		return err
	}
	var bodyBytes int64
	for _, l := range body {
		bodyBytes += int64(len(l)) + 1
	}
	copies := max((size+bodyBytes-1)/bodyBytes, 1)

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	var w io.Writer = f
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(f)
		w = zw
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	newHeader := header[:colon+2] + strconv.FormatInt(dur*copies, 10) + unitSuffix + rest[strings.IndexByte(rest, ':'):]
	fmt.Fprintln(bw, newHeader)
	for _, c := range comms {
		fmt.Fprintln(bw, c)
	}
	buf := make([]byte, 0, 4096)
	for k := int64(0); k < copies; k++ {
		off := k * dur
		for _, l := range body {
			buf = shift(buf[:0], l, off)
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	pcf, row := paraver.Companions(src)
	opcf, orow := paraver.Companions(out)
	for _, p := range [][2]string{{pcf, opcf}, {row, orow}} {
		if b, err := os.ReadFile(p[0]); err == nil {
			if err := os.WriteFile(p[1], b, 0o644); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(os.Stderr, "gentrace: %s: %d copies of %d records, %.2f GB of text\n", out, copies, len(body), float64(copies*bodyBytes)/1e9)
	return nil
}

// readSource returns the header, communicator lines and record lines.
func readSource(src string) (string, []string, []string, error) {
	f, err := os.Open(src)
	if err != nil {
		return "", nil, nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(src, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return "", nil, nil, err
		}
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var header string
	var comms, body []string
	for sc.Scan() {
		l := sc.Text()
		switch {
		case header == "":
			header = l
		case strings.HasPrefix(l, "c:"):
			comms = append(comms, l)
		case l == "" || l[0] == '#':
		default:
			body = append(body, l)
		}
	}
	return header, comms, body, sc.Err()
}

// shift appends line with its times moved by off: fields 6–7 of states,
// 6 of events, 6, 7, 12 and 13 of communications (1-based).
func shift(dst []byte, line string, off int64) []byte {
	fields := strings.Split(line, ":")
	var times []int
	switch fields[0] {
	case "1":
		times = []int{5, 6}
	case "2":
		times = []int{5}
	case "3":
		times = []int{5, 6, 11, 12}
	}
	for _, i := range times {
		if i < len(fields) {
			if v, err := strconv.ParseInt(fields[i], 10, 64); err == nil {
				fields[i] = strconv.FormatInt(v+off, 10)
			}
		}
	}
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, ':')
		}
		dst = append(dst, f...)
	}
	return dst
}
