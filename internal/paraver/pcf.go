package paraver

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// PCF is what popmon uses of a .pcf file (Paraver configuration): the
// names of states, event types and event values.
type PCF struct {
	// States maps a state value to its name ("Running").
	States map[int32]string
	// Types maps an event type to its name ("MPI Point-to-point").
	Types map[int64]string
	// Values maps an event type to its value names ("MPI_Send"). The types
	// of one EVENT_TYPE block share one map (a block of n types and m
	// values costs n + m, not n × m); a type listed in several blocks with
	// VALUES takes the last block's.
	Values map[int64]map[uint64]string
}

// ParsePCF reads a .pcf file. Sections popmon does not use (colours,
// gradients, options) are skipped; a malformed line of a used section is an
// error naming the line.
func ParsePCF(r io.Reader) (*PCF, error) {
	p := &PCF{States: map[int32]string{}, Types: map[int64]string{}, Values: map[int64]map[uint64]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	section := ""
	var block []int64 // event types of the current EVENT_TYPE block
	var blockValues map[uint64]string
	valuesOpen := false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			if section == "EVENT_TYPE" && valuesOpen {
				block, valuesOpen = nil, false
			}
			continue
		}
		if c := line[0]; c < '0' || c > '9' {
			kw := strings.Fields(line)[0]
			switch kw {
			case "EVENT_TYPE":
				section, block, valuesOpen = "EVENT_TYPE", nil, false
			case "VALUES":
				if section == "EVENT_TYPE" && !valuesOpen {
					valuesOpen, blockValues = true, map[uint64]string{}
					for _, t := range block {
						p.Values[t] = blockValues
					}
				}
			default:
				section = kw
			}
			continue
		}
		switch {
		case section == "STATES":
			num, name, ok := strings.Cut(line, " ")
			if !ok {
				num, name, ok = strings.Cut(line, "\t")
			}
			v, err := strconv.ParseInt(strings.TrimSpace(num), 10, 32)
			if !ok || err != nil {
				return nil, fmt.Errorf("line %d: malformed state %q (want VALUE NAME)", n, line)
			}
			p.States[int32(v)] = strings.TrimSpace(name)
		case section == "EVENT_TYPE" && !valuesOpen:
			f := strings.Fields(line)
			if len(f) < 2 {
				return nil, fmt.Errorf("line %d: malformed event type %q (want GRADIENT TYPE NAME)", n, line)
			}
			t, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: malformed event type %q (want GRADIENT TYPE NAME)", n, line)
			}
			name := strings.TrimSpace(strings.Join(f[2:], " "))
			p.Types[t] = name
			block = append(block, t)
		case section == "EVENT_TYPE" && valuesOpen:
			num, name, _ := strings.Cut(line, " ")
			if i := strings.IndexAny(line, " \t"); i >= 0 {
				num, name = line[:i], line[i+1:]
			}
			v, err := strconv.ParseUint(strings.TrimSpace(num), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: malformed event value %q (want VALUE NAME)", n, line)
			}
			blockValues[v] = strings.TrimSpace(name)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// ValueName returns the name of an event value, or "" when p does not name
// it (p may be nil).
func (p *PCF) ValueName(t int64, v uint64) string {
	if p == nil {
		return ""
	}
	return p.Values[t][v]
}

// Row is what popmon uses of a .row file: object names.
type Row struct {
	// Nodes holds the node names (host names), in node order.
	Nodes []string
	// Threads holds the thread names ("THREAD 1.1.1"), in thread order.
	Threads []string
}

// ParseRow reads a .row file: "LEVEL <NAME> SIZE <n>" followed by n names.
func ParseRow(r io.Reader) (*Row, error) {
	row := &Row{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	var dst *[]string
	left := 0
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "LEVEL ") {
			f := strings.Fields(line)
			if len(f) != 4 || f[2] != "SIZE" {
				return nil, fmt.Errorf("line %d: malformed level %q (want LEVEL NAME SIZE N)", n, line)
			}
			size, err := strconv.Atoi(f[3])
			if err != nil || size < 0 {
				return nil, fmt.Errorf("line %d: malformed level size %q", n, f[3])
			}
			left = size
			switch f[1] {
			case "NODE":
				dst = &row.Nodes
			case "THREAD":
				dst = &row.Threads
			default:
				dst = nil
			}
			continue
		}
		if left == 0 {
			return nil, fmt.Errorf("line %d: name %q outside a LEVEL block", n, line)
		}
		left--
		if dst != nil {
			*dst = append(*dst, line)
		}
	}
	return row, sc.Err()
}
