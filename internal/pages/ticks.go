package pages

import (
	"math"
	"strconv"
)

// NiceTicks returns about n evenly spaced "nice" tick values (steps of 1, 2
// or 5 times a power of ten) covering [lo, hi], and the range they span:
// the first tick is ≤ lo and the last ≥ hi. A degenerate or non-finite
// range is widened so that at least two ticks come back.
func NiceTicks(lo, hi float64, n int) (ticks []float64, min, max float64) {
	if math.IsNaN(lo) || math.IsInf(lo, 0) {
		lo = 0
	}
	if math.IsNaN(hi) || math.IsInf(hi, 0) {
		hi = lo + 1
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		if lo == 0 {
			hi = 1
		} else {
			d := math.Abs(lo) * 0.1
			lo, hi = lo-d, hi+d
		}
	}
	if n < 2 {
		n = 2
	}
	step := niceStep((hi - lo) / float64(n-1))
	min = roundTo(math.Floor(lo/step+1e-9)*step, step)
	max = roundTo(math.Ceil(hi/step-1e-9)*step, step)
	for i := 0; ; i++ {
		v := min + float64(i)*step
		if v > max+step/2 || i > 1000 {
			break
		}
		// Round away the binary noise of min + i·step.
		ticks = append(ticks, roundTo(v, step))
	}
	return ticks, min, max
}

// niceStep returns the nice step (1, 2, 5 × 10^k) nearest above raw.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	switch m := raw / p; {
	case m <= 1:
		return p
	case m <= 2:
		return 2 * p
	case m <= 5:
		return 5 * p
	}
	return 10 * p
}

// roundTo rounds v to the decimals that step needs.
func roundTo(v, step float64) float64 {
	d := decimals(step)
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

// decimals returns how many decimals show step exactly (0 for ≥ 1).
func decimals(step float64) int {
	if step >= 1 || step <= 0 {
		return 0
	}
	return int(math.Ceil(-math.Log10(step) - 1e-9))
}

// formatTick formats tick v of a scale with the given step.
func formatTick(v, step float64) string {
	return strconv.FormatFloat(roundTo(v, step), 'f', decimals(step), 64)
}

// evenIndices returns at most n indices spread evenly over 0 … count−1,
// always including the first and the last.
func evenIndices(count, n int) []int {
	if count <= 0 {
		return nil
	}
	if n < 2 {
		n = 2
	}
	if count <= n {
		out := make([]int, count)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, 0, n)
	for i := 0; i < n; i++ {
		idx := int(math.Round(float64(i) * float64(count-1) / float64(n-1)))
		if len(out) == 0 || out[len(out)-1] != idx {
			out = append(out, idx)
		}
	}
	return out
}
