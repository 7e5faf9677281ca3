package paraver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/popmon/popmon/measure"
)

// IsTrace reports whether path names a Paraver trace by its extension
// (.prv or .prv.gz).
func IsTrace(path string) bool {
	return strings.HasSuffix(path, ".prv") || strings.HasSuffix(path, ".prv.gz")
}

// IsTraceFile reports whether path is a Paraver trace: by its name (see
// [IsTrace]) or, whatever its name, by its first bytes ("#Paraver").
func IsTraceFile(path string) bool {
	if IsTrace(path) {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(traceMagic))
	n, _ := io.ReadFull(f, head)
	return IsTraceHead(head[:n])
}

// traceMagic is how a Paraver trace starts.
const traceMagic = "#Paraver"

// IsTraceHead reports whether a file's first bytes (at least 8 of them,
// when it has that many) are those of a Paraver trace: [IsTraceFile] for
// a reader that has opened the file already.
func IsTraceHead(head []byte) bool {
	return bytes.HasPrefix(head, []byte(traceMagic))
}

// Companions returns the .pcf and .row paths next to a trace: the trace's
// name with .prv or .prv.gz replaced.
func Companions(path string) (pcf, row string) {
	base := strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".prv")
	return base + ".pcf", base + ".row"
}

// ImportFile imports the trace at path (plain or gzip-compressed, detected
// by content) with its .pcf and .row when they exist. opt.Path, PCF and Row
// are filled in when unset; a missing companion is noted in the
// measurement, a malformed one is an error. Progress, when set, gets the
// bytes of the file read so far and its size.
func ImportFile(path string, opt Options, progress func(read, size int64)) (*measure.Measurement, error) {
	m, _, err := importFile(path, opt, progress)
	return m, err
}

// importFile is ImportFile, returning the importer too (for its trace).
func importFile(path string, opt Options, progress func(read, size int64)) (*measure.Measurement, *importer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the trace: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("opening the trace: %w", err)
	}
	if st.IsDir() {
		return nil, nil, fmt.Errorf("%s is a directory, not a .prv trace", path)
	}
	if opt.Path == "" {
		opt.Path = path
	}
	var missing []string
	pcfPath, rowPath := Companions(path)
	if opt.PCF == nil {
		p, err := readCompanion(pcfPath, ParsePCF)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, "no .pcf next to the trace: MPI calls are named by their event values")
		case err != nil:
			return nil, nil, err
		}
		opt.PCF = p
	}
	if opt.Row == nil {
		r, err := readCompanion(rowPath, ParseRow)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, "no .row next to the trace: host names unknown")
		case err != nil:
			return nil, nil, err
		}
		opt.Row = r
	}

	counted := &countingReader{r: f}
	if progress != nil {
		size := st.Size()
		opt.Progress = func(int64) { progress(counted.n, size) }
	}
	m, im, err := importStream(counted, opt)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	m.Source.Notes = append(m.Source.Notes, missing...)
	return m, im, nil
}

// importStream imports a .prv stream, plain or gzip-compressed (detected
// by content).
func importStream(src io.Reader, opt Options) (*measure.Measurement, *importer, error) {
	br := bufio.NewReaderSize(src, readBufferSize)
	var r io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, nil, errors.New("the trace is truncated: the file ends inside its gzip header; re-copy the file")
		}
		if err != nil {
			return nil, nil, fmt.Errorf("bad gzip data: %w", err)
		}
		defer zr.Close()
		// Decompress on another core while this one parses.
		ar := newAsyncReader(zr)
		defer ar.Close()
		r = ar
	}
	return run(r, opt)
}

// readCompanion parses a companion file with parse.
func readCompanion[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, err
	}
	defer f.Close()
	v, err := parse(bufio.NewReader(f))
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// countingReader counts the bytes read from the file, for progress.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// asyncReader reads its source in a goroutine, a chunk ahead of its
// consumer, so that decompression and parsing run on two cores. Memory:
// a fixed ring of chunks.
type asyncReader struct {
	full  chan chunk
	free  chan []byte
	done  chan struct{}
	cur   chunk
	off   int
	err   error
	close sync.Once
}

type chunk struct {
	b   []byte
	err error
}

// asyncChunk is the size of each of the asyncChunks buffers (a variable
// only for the fuzz targets, like readBufferSize).
var asyncChunk = 1 << 20

const asyncChunks = 4

func newAsyncReader(src io.Reader) *asyncReader {
	a := &asyncReader{full: make(chan chunk, asyncChunks), free: make(chan []byte, asyncChunks), done: make(chan struct{})}
	for i := 0; i < asyncChunks; i++ {
		a.free <- make([]byte, asyncChunk)
	}
	go func() {
		defer close(a.full)
		for {
			var buf []byte
			select {
			case buf = <-a.free:
			case <-a.done:
				return
			}
			n, err := fill(src, buf)
			select {
			case a.full <- chunk{b: buf[:n], err: err}:
			case <-a.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return a
}

// fill reads into buf until it is full or src fails; unlike io.ReadFull it
// passes src's error through unchanged (a truncated gzip stream's
// io.ErrUnexpectedEOF stays distinct from a clean io.EOF).
func fill(src io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := src.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (a *asyncReader) Read(p []byte) (int, error) {
	for a.off >= len(a.cur.b) {
		if a.err != nil {
			return 0, a.err
		}
		if a.cur.b != nil {
			a.free <- a.cur.b[:cap(a.cur.b)]
			a.cur.b = nil
		}
		c, ok := <-a.full
		if !ok {
			a.err = io.EOF
			return 0, a.err
		}
		a.cur, a.off = c, 0
		if c.err != nil {
			a.err = c.err
		}
	}
	n := copy(p, a.cur.b[a.off:])
	a.off += n
	return n, nil
}

// Close stops the reading goroutine.
func (a *asyncReader) Close() error {
	a.close.Do(func() { close(a.done) })
	return nil
}
