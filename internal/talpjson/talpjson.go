// Package talpjson owns the DLB/TALP JSON format (the JSON output of DLB's
// TALP module, DLB 3.5, 3.6 and 3.7 layouts, and popmon's own talp-json
// report, which follows the 3.7 layout): its keys and their metric ids
// ([Efficiencies]), its time layout, the names of its whole-run region,
// reading ([Read]) and writing ([Write]).
//
// [Read] converts a file into popmon's measurement model, so that popmon's
// reports and models run on TALP users' existing files, and returns, from
// the same pass, what DLB itself wrote: its resources and its own
// efficiencies ([DLB]), which internal/runs summarises for scaling tables.
// A TALP file holds per-region totals over all processes, not per-process
// accounts. [Read] therefore synthesizes the processes of the run (CPUs
// split as evenly as possible over the ranks, ranks placed on the nodes in
// contiguous blocks) and splits every total over them by CPUs, except the
// MPI time: that is distributed so that popmon's talp model (POP-METRICS.md
// §2) reproduces DLB's own per-process and per-node MPI minima
// (minMpiNormdProc, minMpiNormdNode), and with them DLB's communication
// efficiency and load balance In/Out. The measurement's Source notes say
// what was synthesized.
package talpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/popmon/popmon/measure"
)

// Limits on what Read accepts, so that a corrupt file cannot make it
// allocate without bound.
const (
	// maxRanks bounds numMpiRanks and numNodes.
	maxRanks = 1 << 20
	// maxCPUs bounds numCpus.
	maxCPUs = 1 << 26
	// maxAccounts bounds regions × nodes (and regions × GPU devices).
	maxAccounts = 1 << 20
	// maxFullAccounts bounds regions × processes of the full form, one
	// account each (about 1.5 KB while converting); a larger file gets
	// the summary form, whose cost does not depend on the processes.
	maxFullAccounts = 1 << 16
	// maxDevices bounds the synthesized GPU devices: each has its own
	// accounts.
	maxDevices = 1 << 16
	// unbackedRanks is how many processes (and GPU devices) a file may
	// declare whatever its content. Beyond it, the declaration must be
	// backed by the file's times (see [backed]): a TALP file holds sums,
	// so its size does not grow with the run, but every synthesized
	// process costs an account per region (about 1.5 KB while
	// converting), and a few bytes declaring 10⁶ ranks must not cost
	// gigabytes.
	unbackedRanks = 64
)

// Names written into the measurement.
const (
	// ToolName is the measurement's tool name ([measure.Tool.Name]).
	ToolName = "DLB/TALP"
	// MPILibrary is the measurement's MPI library ([measure.MPI.Library]):
	// a TALP file does not name the MPI library.
	MPILibrary = "MPI (DLB/TALP file)"
	// OpenMPRuntime is the measurement's OpenMP runtime
	// ([measure.OpenMP.Runtime]) when the file has OpenMP data.
	OpenMPRuntime = "OpenMP (DLB/TALP file)"
)

// IsTALP reports whether data looks like DLB/TALP JSON: a JSON object with
// a top-level "dlbVersion" or "Application" key. It scans the top level
// only (keys of nested objects do not count), stops at the first such key
// and does not allocate; it does not check that the rest of data is valid.
func IsTALP(data []byte) bool {
	s := scanner{b: data}
	s.b = bytes.TrimPrefix(s.b, []byte("\xef\xbb\xbf")) // UTF-8 BOM
	s.ws()
	if !s.eat('{') {
		return false
	}
	for {
		s.ws()
		key, ok := s.str()
		if !ok {
			return false
		}
		s.ws()
		if !s.eat(':') {
			return false
		}
		if string(key) == "dlbVersion" || string(key) == "Application" {
			return true
		}
		if !s.skipValue() {
			return false
		}
		s.ws()
		if !s.eat(',') {
			return false
		}
	}
}

// scanner walks JSON text without decoding it.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string and returns its raw content (escapes not decoded).
func (s *scanner) str() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
		case '"':
			s.i++
			return s.b[start : s.i-1], true
		default:
			s.i++
		}
	}
	return nil, false
}

// skipValue skips one value: a string, an object or array (nested
// brackets counted outside strings), or a scalar.
func (s *scanner) skipValue() bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		_, ok := s.str()
		return ok
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, ok := s.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	}
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return s.i > start
		}
		s.i++
	}
	return false
}

// Read maps the DLB/TALP JSON file data into a measurement and returns
// what DLB wrote itself ([DLB]), from one pass over the file; path is
// recorded in the measurement's Source (and names the file in errors). The
// measurement passes [measure.Measurement.Validate]. Read fails, with an
// error that names the file and the problem, for input that is not JSON,
// has no "Application" object of regions, has a region that is not an
// object, a time, count or efficiency that is not a number, a time or
// count that is negative or too large, resources beyond what popmon
// converts, or more processes or GPU devices than its times can back (see
// unbackedRanks): its cost is bounded by what the file holds, not by the
// size it declares.
func Read(data []byte, path string) (*measure.Measurement, *DLB, error) {
	m, d, err := read(data, path)
	if err != nil {
		name := path
		if name == "" {
			name = "input"
		}
		return nil, nil, fmt.Errorf("convert DLB/TALP JSON %s: %w", name, err)
	}
	return m, d, nil
}

// Convert is [Read] for the measurement only.
func Convert(data []byte, path string) (*measure.Measurement, error) {
	m, _, err := Read(data, path)
	return m, err
}

// file is what Read reads from a DLB/TALP file.
type file struct {
	dlbVersion    string
	popmonVersion string
	timestamp     string
	resources     *fields // nil when the file has no "resources" object
	res           fileResources
	git           *measure.Git
	// regions are in the measurement's order: the whole-run region first,
	// renamed to Global (see [orderRegions]); global is its index in the
	// file (-1: none), renamed the name DLB gave it when not "Global".
	regions []region
	global  int
	renamed string
	// perProcess is DLB 3.5's top-level "region" array of per-process
	// values, when present; perProcessBad says it could not be read.
	perProcess    []procRegion
	hasPerProcess bool
	perProcessBad bool
}

// fileResources are the counts of the "resources" object (0 where it lacks
// a key).
type fileResources struct {
	ranks, nodes, cpus, gpus int
}

// procRegion is one element of DLB 3.5's top-level "region" array.
type procRegion struct {
	Name    string                       `json:"name"`
	Process []map[string]json.RawMessage `json:"process"`
}

// region is one region of "Application".
type region struct {
	name string
	orig string // the name in the file (name may become "Global")
	f    *fields
	// cpus, ranks, nodes, gpus are numCpus, numMpiRanks, numNodes, numGpus;
	// ompThreads is numOmpThreads (DLB after 3.7.0: the threads, where
	// numCpus counts the hardware CPUs they ran on).
	cpus, ranks, nodes, gpus int
	ompThreads               int
	cycles, instructions     int64
	// fileCycles, fileInstructions are the counters as the file has them.
	fileCycles, fileInstructions float64
	measurements, mpiCalls       int64
	ompParallels, ompTasks       int64
	gpuCalls                     int64
	elapsed, useful              int64
	mpi, mpiWorkerIdle           int64 // mpiTime; mpiWorkerIdleTime (DLB after 3.7.0 only)
	// hasWorkerIdle says the file has mpiWorkerIdleTime: its mpiTime is
	// the MPI threads' own time and its ompSerializationTime includes the
	// workers' idle time while their primary is in MPI.
	hasWorkerIdle           bool
	ompLB, ompSched, ompSer int64
	gpuRuntime              int64
	gpuTimes                gpuTimes // gpuUsefulTime, … (DLB ≥ 3.6)
	badCounters             bool     // negative or absurd cycles/instructions
	// minProc, minNode are minMpiNormdProc, minMpiNormdNode (DLB ≥ 3.6);
	// ofMaxUseful is mpiNormdOfMaxUseful (DLB 3.5).
	minProc, minNode, ofMaxUseful          float64
	hasMinProc, hasMinNode, hasOfMaxUseful bool
	// eff are DLB's own efficiencies by metric id, those the file has
	// (they may be impossible: < 0, > 1).
	eff map[string]float64
}

// own returns the region's efficiency with the metric id id as DLB wrote
// it, NaN when the file has none.
func (r *region) own(id string) float64 {
	if v, ok := r.eff[id]; ok {
		return v
	}
	return math.NaN()
}

func read(data []byte, path string) (*measure.Measurement, *DLB, error) {
	f, err := parse(data)
	if err != nil {
		return nil, nil, err
	}
	m, err := build(f, path)
	if err != nil {
		return nil, nil, err
	}
	return m, dlbOwn(f), nil
}

// parse decodes data.
func parse(data []byte) (*file, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("the file is empty, not DLB/TALP JSON")
	}
	if !json.Valid(trimmed) {
		var v any
		err := json.Unmarshal(trimmed, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if trimmed[0] != '{' {
		return nil, errors.New(`not a DLB/TALP JSON file: the top level is not a JSON object (DLB writes an object with "dlbVersion" and "Application")`)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &top); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	f := &file{}
	for _, s := range []struct {
		key string
		dst *string
	}{{"dlbVersion", &f.dlbVersion}, {"popmonVersion", &f.popmonVersion}, {"timestamp", &f.timestamp}} {
		v, err := optString(top, s.key)
		if err != nil {
			return nil, err
		}
		*s.dst = strings.TrimSpace(v)
	}
	if raw, ok := top["resources"]; ok && !isNull(raw) {
		if !isObject(raw) {
			return nil, fmt.Errorf(`"resources" is %s, not an object`, show(raw))
		}
		fs, err := newFields(raw, `"resources"`)
		if err != nil {
			return nil, err
		}
		f.resources = fs
	}
	if raw, ok := top["metadata"]; ok && !isNull(raw) {
		g, err := parseMetadata(raw)
		if err != nil {
			return nil, err
		}
		f.git = g
	}
	if raw, ok := top["region"]; ok && !isNull(raw) {
		f.hasPerProcess = true
		if json.Unmarshal(raw, &f.perProcess) != nil {
			f.perProcess, f.perProcessBad = nil, true
		}
	}
	app, ok := top["Application"]
	if !ok {
		return nil, errors.New(`no "Application" object: not a DLB/TALP JSON file (DLB writes its regions under "Application")`)
	}
	if !isObject(app) {
		return nil, fmt.Errorf(`"Application" is %s, not an object of regions`, show(app))
	}
	names, raws, err := OrderedObject(app)
	if err != nil {
		return nil, fmt.Errorf(`"Application": %v`, err)
	}
	if len(names) == 0 {
		return nil, errors.New(`"Application" has no regions`)
	}
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		if strings.TrimSpace(n) == "" {
			return nil, fmt.Errorf(`"Application" has a region with an empty name`)
		}
		if seen[n] {
			return nil, fmt.Errorf(`"Application" has two regions named %q`, n)
		}
		seen[n] = true
		if !isObject(raws[i]) {
			return nil, fmt.Errorf("region %q is %s, not an object", n, show(raws[i]))
		}
		r, err := parseRegion(n, raws[i])
		if err != nil {
			return nil, fmt.Errorf("region %q: %w", n, err)
		}
		f.regions = append(f.regions, r)
	}
	for _, c := range []struct {
		key string
		dst *int
		max int
	}{
		{"numMpiRanks", &f.res.ranks, maxRanks},
		{"numNodes", &f.res.nodes, maxRanks},
		{"numCpus", &f.res.cpus, maxCPUs},
		{"numGpus", &f.res.gpus, maxRanks},
	} {
		v, _, err := f.resources.int(c.key, int64(c.max))
		if err != nil {
			return nil, err
		}
		*c.dst = int(v)
	}
	f.regions, f.global, f.renamed = orderRegions(f.regions)
	if f.popmonVersion != "" {
		// popmon's numCpus counts the hardware CPUs of the processes'
		// affinity masks (Write), its numOmpThreads its CPUs, the
		// threads, whose times the file has: the measurement's CPUs.
		for i := range f.regions {
			r := &f.regions[i]
			if r.ompThreads > r.cpus {
				if i == 0 && f.global >= 0 && f.res.cpus == r.cpus {
					f.res.cpus = r.ompThreads
				}
				r.cpus = r.ompThreads
			}
		}
	}
	if f.global >= 0 {
		// DLB counts MPI_Init and MPI_Finalize in the whole-run region,
		// one each per rank; popmon's Global runs between them (Write
		// puts them back).
		g := &f.regions[0]
		ranks := g.ranks
		if ranks <= 0 {
			ranks = f.res.ranks
		}
		g.mpiCalls = max(g.mpiCalls-2*int64(ranks), 0)
	}
	return f, nil
}

func parseRegion(name string, raw json.RawMessage) (region, error) {
	fs, err := newFields(raw, "")
	if err != nil {
		return region{}, err
	}
	r := region{name: name, orig: name, f: fs}
	for _, c := range []struct {
		key string
		dst *int
		max int
	}{
		{"numCpus", &r.cpus, maxCPUs},
		{"numMpiRanks", &r.ranks, maxRanks},
		{"numNodes", &r.nodes, maxRanks},
		{"numGpus", &r.gpus, maxRanks},
		{"numOmpThreads", &r.ompThreads, maxCPUs},
	} {
		v, _, err := fs.int(c.key, int64(c.max))
		if err != nil {
			return r, err
		}
		*c.dst = int(v)
	}
	// Counters: DLB writes garbage (negative values) when PAPI fails;
	// such counters are dropped, not an error (fileCycles and
	// fileInstructions keep them).
	for _, c := range []struct {
		key string
		dst *int64
		raw *float64
	}{{"cycles", &r.cycles, &r.fileCycles}, {"instructions", &r.instructions, &r.fileInstructions}} {
		lit, ok, err := fs.number(c.key)
		if err != nil {
			return r, err
		}
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(lit, 64) // number checked that lit parses
		*c.raw = v
		if v < 0 || v >= math.MaxInt64 {
			r.badCounters = true
		} else {
			*c.dst = int64(math.Round(v))
		}
	}
	if r.badCounters {
		r.cycles, r.instructions = 0, 0
	}
	for _, c := range []struct {
		key string
		dst *int64
	}{
		{"numMeasurements", &r.measurements},
		{"numMpiCalls", &r.mpiCalls},
		{"numOmpParallels", &r.ompParallels},
		{"numOmpTasks", &r.ompTasks},
		{"numGpuRuntimeCalls", &r.gpuCalls},
		{"elapsedTime", &r.elapsed},
		{"usefulTime", &r.useful},
		{"mpiTime", &r.mpi},
		{"mpiWorkerIdleTime", &r.mpiWorkerIdle},
		{"ompLoadImbalanceTime", &r.ompLB},
		{"ompSchedulingTime", &r.ompSched},
		{"ompSerializationTime", &r.ompSer},
		{"gpuRuntimeTime", &r.gpuRuntime},
	} {
		v, _, err := fs.int(c.key, math.MaxInt64)
		if err != nil {
			return r, err
		}
		*c.dst = v
	}
	if r.mpi > math.MaxInt64-r.mpiWorkerIdle {
		return r, errors.New("mpiTime + mpiWorkerIdleTime is too large")
	}
	r.hasWorkerIdle = fs.has("mpiWorkerIdleTime")
	for _, c := range []struct {
		key string
		dst *int64
	}{
		{"gpuUsefulTime", &r.gpuTimes.useful},
		{"gpuCommunicationTime", &r.gpuTimes.comm},
		{"maxGpuUsefulTime", &r.gpuTimes.maxUseful},
		{"maxGpuActiveTime", &r.gpuTimes.maxActive},
	} {
		v, _, err := fs.int(c.key, math.MaxInt64)
		if err != nil {
			return r, err
		}
		*c.dst = v
	}
	for _, c := range []struct {
		key string
		dst *float64
		has *bool
	}{
		{"minMpiNormdProc", &r.minProc, &r.hasMinProc},
		{"minMpiNormdNode", &r.minNode, &r.hasMinNode},
		{"mpiNormdOfMaxUseful", &r.ofMaxUseful, &r.hasOfMaxUseful},
	} {
		v, ok, err := fs.float(c.key)
		if err != nil {
			return r, err
		}
		*c.dst, *c.has = v, ok
	}
	r.eff = map[string]float64{}
	for _, e := range Efficiencies {
		lit, ok, err := fs.number(e.Key)
		if err != nil {
			return r, err
		}
		if ok {
			// number checked that lit parses: a finite number of either
			// sign.
			r.eff[e.ID], _ = strconv.ParseFloat(lit, 64)
		}
	}
	return r, nil
}

func parseMetadata(raw json.RawMessage) (*measure.Git, error) {
	if !isObject(raw) {
		return nil, fmt.Errorf(`"metadata" is %s, not an object`, show(raw))
	}
	var md map[string]json.RawMessage
	if err := json.Unmarshal(raw, &md); err != nil {
		return nil, fmt.Errorf(`"metadata": %v`, err)
	}
	g := &measure.Git{}
	for _, s := range []struct {
		key string
		dst *string
	}{{"gitCommit", &g.Commit}, {"gitBranch", &g.Branch}, {"gitTimestamp", &g.Timestamp}, {"defaultGitBranch", &g.DefaultBranch}} {
		v, err := optString(md, s.key)
		if err != nil {
			return nil, fmt.Errorf(`"metadata": %w`, err)
		}
		*s.dst = v
	}
	if raw, ok := md["isMergeRequest"]; ok && !isNull(raw) {
		var b bool
		var s string
		switch {
		case json.Unmarshal(raw, &b) == nil:
		case json.Unmarshal(raw, &s) == nil && (s == "true" || s == "false"):
			b = s == "true"
		default:
			return nil, fmt.Errorf(`"metadata": "isMergeRequest" is %s, not true or false`, show(raw))
		}
		g.IsMergeRequest = b
	}
	if *g == (measure.Git{}) {
		return nil, nil
	}
	return g, nil
}

// fields are the members of one JSON object, read by key.
type fields struct {
	m    map[string]json.RawMessage
	what string // `"resources"` or "" (a region: the caller names it)
}

func newFields(raw json.RawMessage, what string) (*fields, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		if what == "" {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	return &fields{m: m, what: what}, nil
}

func (f *fields) errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if f.what != "" {
		return fmt.Errorf("%s: %w", f.what, err)
	}
	return err
}

// has reports whether the object has key with a non-null value.
func (f *fields) has(key string) bool {
	if f == nil {
		return false
	}
	raw, ok := f.m[key]
	return ok && !isNull(raw)
}

// number returns the literal of key: a JSON number, or a string holding
// one ("21817855.00"); ok is false when the key is absent or null.
func (f *fields) number(key string) (lit string, ok bool, err error) {
	if f == nil {
		return "", false, nil
	}
	raw, present := f.m[key]
	if !present || isNull(raw) {
		return "", false, nil
	}
	t := strings.TrimSpace(string(raw))
	if strings.HasPrefix(t, `"`) {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false, f.errorf("%s is %s, not a number", key, show(raw))
		}
		t = strings.TrimSpace(s)
	}
	if _, err := strconv.ParseFloat(t, 64); err != nil || !isNumberLiteral(t) {
		return "", false, f.errorf("%s is %s, not a number", key, show(raw))
	}
	return t, true, nil
}

// float returns key as a finite, non-negative float64 (0 when absent).
func (f *fields) float(key string) (float64, bool, error) {
	lit, ok, err := f.number(key)
	if !ok || err != nil {
		return 0, false, err
	}
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false, f.errorf("%s (%s) is out of range", key, lit)
	}
	if v < 0 {
		return 0, false, f.errorf("%w", &negativeError{key, lit})
	}
	return v, true, nil
}

// int returns key rounded to an integer in 0 … limit (0 when absent).
// Integer literals are read exactly; others (DLB 3.5 writes counters as
// "21817855.00") are rounded.
func (f *fields) int(key string, limit int64) (int64, bool, error) {
	lit, ok, err := f.number(key)
	if !ok || err != nil {
		return 0, false, err
	}
	if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
		if n < 0 {
			return 0, false, f.errorf("%w", &negativeError{key, lit})
		}
		if n > limit {
			return 0, false, f.errorf("%s (%s) is larger than popmon converts (%d)", key, lit, limit)
		}
		return n, true, nil
	}
	v, err := strconv.ParseFloat(lit, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, false, f.errorf("%s is %s, not a number", key, lit)
	case v < 0:
		return 0, false, f.errorf("%w", &negativeError{key, lit})
	case math.IsInf(v, 0) || v >= math.MaxInt64 || math.Round(v) > float64(limit):
		return 0, false, f.errorf("%s (%s) is larger than popmon converts (%d)", key, lit, limit)
	}
	return int64(math.Round(v)), true, nil
}

// negativeError says that a time or count is negative.
type negativeError struct{ key, lit string }

func (e *negativeError) Error() string { return fmt.Sprintf("%s is negative (%s)", e.key, e.lit) }

// isNumberLiteral reports whether s is a JSON number (strconv also accepts
// "Inf", "NaN", hex and underscores, which JSON does not).
func isNumberLiteral(s string) bool {
	return json.Valid([]byte(s)) && s != "" && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))
}

func optString(m map[string]json.RawMessage, key string) (string, error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%q is %s, not a string", key, show(raw))
	}
	return s, nil
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

func isObject(raw json.RawMessage) bool {
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{"))
}

// show quotes a JSON value for an error message, shortened.
func show(raw json.RawMessage) string {
	t := strings.TrimSpace(string(raw))
	switch {
	case t == "":
		return "empty"
	case strings.HasPrefix(t, "["):
		return "an array"
	case strings.HasPrefix(t, "{"):
		return "an object"
	}
	if len(t) > 40 {
		t = t[:40] + "…"
	}
	return t
}

// ErrNotObject is returned by [OrderedObject] for JSON that is not an
// object.
var ErrNotObject = errors.New("not a JSON object")

// OrderedObject returns the keys and raw values of a JSON object in file
// order (TALP's region order is meaningful; Go maps lose it).
func OrderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, ErrNotObject
	}
	var names []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, ErrNotObject
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		names = append(names, k)
		vals = append(vals, v)
	}
	return names, vals, nil
}

// parseTime reads DLB's timestamp (zone-less, read as UTC) or RFC 3339.
func parseTime(s string) (time.Time, bool) {
	if t, err := time.Parse(TimeLayout, s); err == nil {
		return t.UTC(), true
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}
