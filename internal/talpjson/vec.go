package talpjson

import "math"

// vec is a per-process vector in run-length form: runs of equal values in
// rank order. A TALP file holds totals, and every per-process quantity
// synthesized from them (a split by CPUs, an even split, rank 0's share)
// takes a few distinct values in a few runs whatever the number of
// processes, so the conversion costs the same for 4 and for 10⁶ ranks.
type vec []run

// run is n consecutive equal values v.
type run struct {
	n int
	v int64
}

// constVec returns n copies of v.
func constVec(n int, v int64) vec {
	if n <= 0 {
		return nil
	}
	return vec{{n, v}}
}

// onesVec returns n ones (equal weights).
func onesVec(n int) vec { return constVec(n, 1) }

// length returns the number of elements.
func (x vec) length() int {
	n := 0
	for _, r := range x {
		n += r.n
	}
	return n
}

// sum returns Σ elements (int64: the callers' values sum to a total read
// from the file, or to CPUs).
func (x vec) sum() int64 {
	var s int64
	for _, r := range x {
		s += int64(r.n) * r.v
	}
	return s
}

// first returns element 0 (0 for an empty vector).
func (x vec) first() int64 {
	if len(x) == 0 {
		return 0
	}
	return x[0].v
}

// slice returns elements lo … hi−1.
func (x vec) slice(lo, hi int) vec {
	var out vec
	pos := 0
	for _, r := range x {
		s, e := max(pos, lo), min(pos+r.n, hi)
		if s < e {
			out = out.add(e-s, r.v)
		}
		pos += r.n
		if pos >= hi {
			break
		}
	}
	return out
}

// add appends n copies of v, merging with the last run.
func (x vec) add(n int, v int64) vec {
	if n <= 0 {
		return x
	}
	if len(x) > 0 && x[len(x)-1].v == v {
		x[len(x)-1].n += n
		return x
	}
	return append(x, run{n, v})
}

// concat returns the vectors one after another.
func concat(xs ...vec) vec {
	var out vec
	for _, x := range xs {
		for _, r := range x {
			out = out.add(r.n, r.v)
		}
	}
	return out
}

// mapVec applies f to every element.
func (x vec) mapVec(f func(int64) int64) vec {
	var out vec
	for _, r := range x {
		out = out.add(r.n, f(r.v))
	}
	return out
}

// zip combines two vectors of the same length element by element.
func zip(a, b vec, f func(x, y int64) int64) vec {
	var out vec
	i, j := 0, 0
	ai, bj := 0, 0 // elements used of a[i], b[j]
	for i < len(a) && j < len(b) {
		n := min(a[i].n-ai, b[j].n-bj)
		out = out.add(n, f(a[i].v, b[j].v))
		ai += n
		bj += n
		if ai == a[i].n {
			i, ai = i+1, 0
		}
		if bj == b[j].n {
			j, bj = j+1, 0
		}
	}
	return out
}

func plus(x, y int64) int64 { return x + y }

// expand returns the elements one by one (for the small vectors of the
// full form and of the GPU devices).
func (x vec) expand() []int64 {
	out := make([]int64, 0, x.length())
	for _, r := range x {
		for range r.n {
			out = append(out, r.v)
		}
	}
	return out
}

// splitCounts splits total into n parts as evenly as possible, the
// remainder to the first parts, each at least 1.
func splitCounts(total, n int) vec {
	if n <= 0 {
		return nil
	}
	q, r := total/n, total%n
	return constVec(r, int64(max(q, 1)+1)).add(n-r, int64(max(q, 1)))
}

// split splits total (≥ 0) into parts proportional to the weights w (each
// ≥ 1), exactly: the parts sum to total, the rounding remainder goes to
// the first parts, one unit each.
func split(total int64, w vec) vec {
	n := w.length()
	if n == 0 {
		return nil
	}
	if total <= 0 {
		return constVec(n, 0)
	}
	W := w.sum()
	q, r := total/W, total%W
	var base vec
	var sum int64
	for _, x := range w {
		// q·x ≤ total; r·x < W·x ≤ W² fits for W ≤ 2^31.
		v := q*x.v + r*x.v/W
		base = base.add(x.n, v)
		sum += int64(x.n) * v
	}
	// Each part lost less than 1 to rounding: the deficit is below n.
	d := int(min(total-sum, int64(n)))
	return concat(base.slice(0, d).mapVec(func(v int64) int64 { return v + 1 }), base.slice(d, n))
}

// splitInt64 is [split] for a few weights, element by element.
func splitInt64(total int64, w []int) []int64 {
	var wv vec
	for _, x := range w {
		wv = wv.add(1, int64(x))
	}
	return split(total, wv).expand()
}

// segment is a run of processes whose vectors all hold the same values.
type segment struct {
	start, n int
	v        []int64 // one value per vector
}

// segments walks vectors of equal length together and calls f for every
// maximal run of ranks over which none of them changes.
func segments(xs []vec, f func(s segment)) {
	idx := make([]int, len(xs))
	used := make([]int, len(xs))
	vals := make([]int64, len(xs))
	start := 0
	for {
		n := math.MaxInt
		for k, x := range xs {
			if idx[k] >= len(x) {
				return
			}
			n = min(n, x[idx[k]].n-used[k])
			vals[k] = x[idx[k]].v
		}
		f(segment{start: start, n: n, v: vals})
		start += n
		for k, x := range xs {
			used[k] += n
			if used[k] == x[idx[k]].n {
				idx[k], used[k] = idx[k]+1, 0
			}
		}
	}
}

// upTo returns, for node sizes x (ranks per node, contiguous blocks), the
// sizes of the nodes of the first n ranks: the last one cut short.
func (x vec) upTo(n int) vec {
	var out vec
	for _, r := range x {
		if n <= 0 || r.v <= 0 {
			break
		}
		whole := min(r.n, n/int(r.v))
		out = out.add(whole, r.v)
		n -= whole * int(r.v)
		if whole < r.n && n > 0 {
			out = out.add(1, int64(n))
			n = 0
		}
	}
	return out
}

// ones returns n ones.
func ones(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}
