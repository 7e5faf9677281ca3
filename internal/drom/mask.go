package drom

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Mask is a set of CPU ids 0..MaxCPUs-1, as the registry stores it.
type Mask [words]uint64

// Set adds CPU c (ignored beyond MaxCPUs).
func (m *Mask) Set(c int) {
	if c >= 0 && c < MaxCPUs {
		m[c/64] |= 1 << (c % 64)
	}
}

// Has reports whether c is in m.
func (m Mask) Has(c int) bool { return c >= 0 && c < MaxCPUs && m[c/64]>>(c%64)&1 == 1 }

// Count is the number of CPUs in m.
func (m Mask) Count() int {
	n := 0
	for _, w := range m {
		n += bits.OnesCount64(w)
	}
	return n
}

// CPUs lists m's CPUs in order.
func (m Mask) CPUs() []int {
	var cs []int
	for c := 0; c < MaxCPUs; c++ {
		if m.Has(c) {
			cs = append(cs, c)
		}
	}
	return cs
}

// Minus is m without the CPUs of o.
func (m Mask) Minus(o Mask) Mask {
	for i := range m {
		m[i] &^= o[i]
	}
	return m
}

// String is m as a CPU list, ranges joined: "0-3,8"; "" when empty.
func (m Mask) String() string {
	var parts []string
	cs := m.CPUs()
	for i := 0; i < len(cs); {
		j := i
		for j+1 < len(cs) && cs[j+1] == cs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cs[i], cs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// ParseMask reads a CPU list as dlb_taskset does: decimal ids and ranges
// ("0,5-7"), or a hexadecimal or binary mask whose least significant bit is
// CPU 0 ("0xE1", "0b11100001").
func ParseMask(s string) (Mask, error) {
	var m Mask
	bad := fmt.Errorf("%q is not a CPU list (0,5-7, 0xE1 or 0b11100001)", s)
	if s == "" {
		return m, bad
	}
	if len(s) > 2 && s[0] == '0' && strings.ContainsRune("xXbB", rune(s[1])) {
		base := 16
		if s[1] == 'b' || s[1] == 'B' {
			base = 2
		}
		step := bits.Len(uint(base - 1))
		c := 0
		for i := len(s) - 1; i >= 2; i-- {
			v, err := strconv.ParseUint(s[i:i+1], base, 8)
			if err != nil {
				return Mask{}, bad
			}
			for b := 0; b < step; b, c = b+1, c+1 {
				if v>>b&1 == 1 {
					if c >= MaxCPUs {
						return Mask{}, fmt.Errorf("%q names CPUs beyond %d", s, MaxCPUs-1)
					}
					m.Set(c)
				}
			}
		}
		return m, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return Mask{}, bad
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return Mask{}, bad
			}
		}
		if b >= MaxCPUs {
			return Mask{}, fmt.Errorf("%q names CPUs beyond %d", s, MaxCPUs-1)
		}
		for c := a; c <= b; c++ {
			m.Set(c)
		}
	}
	return m, nil
}
