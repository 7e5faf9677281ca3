// Package units formats durations, byte counts, percentages and seconds
// for people, the same way in every report, message and page. Where two
// outputs format the same quantity differently on purpose, both ways are
// here, under names that say the difference.
package units

import (
	"fmt"
	"math"
	"strconv"
)

// Duration formats ns for people, up to hours: "750 ns", "12.50 µs",
// "3.20 ms", "1.23 s", "2 min 05 s", "1 h 02 min 03 s"; negative times
// with a leading "-".
func Duration(ns int64) string {
	if ns < 0 {
		return "-" + Duration(-max(ns, -math.MaxInt64))
	}
	if s, ok := belowMinute(ns); ok {
		return s
	}
	sec := int64(math.Round(float64(ns) / 1e9))
	if sec < 3600 {
		return fmt.Sprintf("%d min %02d s", sec/60, sec%60)
	}
	return fmt.Sprintf("%d h %02d min %02d s", sec/3600, sec%3600/60, sec%60)
}

// DurationInSeconds formats ns for a sentence like [Duration], but never
// in minutes or hours: "750 ns", "12.50 µs", "3.20 ms", "1.23 s",
// "125.40 s" (the accounts check's sentences, which compare two times).
func DurationInSeconds(ns int64) string {
	if s, ok := belowMinute(ns); ok {
		return s
	}
	return fmt.Sprintf("%.2f s", float64(ns)/1e9)
}

// belowMinute formats ns in ns, µs, ms or s with two decimals when it
// rounds to under a minute.
func belowMinute(ns int64) (string, bool) {
	f := float64(ns)
	switch {
	case ns < 1000:
		return fmt.Sprintf("%d ns", ns), true
	case f < 999.995e3:
		return fmt.Sprintf("%.2f µs", f/1e3), true
	case f < 999.995e6:
		return fmt.Sprintf("%.2f ms", f/1e6), true
	case f < 59.995e9:
		return fmt.Sprintf("%.2f s", f/1e9), true
	}
	return "", false
}

// Seconds formats a length of time given in seconds briefly, as the time
// series' intervals are named: "1 s", "0.25 s", "1000 s" (whole seconds
// as integers, other times with 3 significant digits).
func Seconds(s float64) string {
	if s >= 1 && s == float64(int64(s)) {
		return strconv.FormatInt(int64(s), 10) + " s"
	}
	return strconv.FormatFloat(s, 'g', 3, 64) + " s"
}

// DurationSignificant formats ns for a message in the largest unit it
// reaches, with up to 6 significant digits and never in minutes: "800 ns",
// "12.5 µs", "12.5 ms", "4.2 s", "125.4 s" (the Paraver reader's
// messages, which quote a trace's times as the trace has them).
func DurationSignificant(ns int64) string {
	switch {
	case ns >= 1e9:
		return strconv.FormatFloat(float64(ns)/1e9, 'g', 6, 64) + " s"
	case ns >= 1e6:
		return strconv.FormatFloat(float64(ns)/1e6, 'g', 6, 64) + " ms"
	case ns >= 1e3:
		return strconv.FormatFloat(float64(ns)/1e3, 'g', 6, 64) + " µs"
	}
	return strconv.FormatInt(ns, 10) + " ns"
}

// FixedSeconds formats ns in seconds with a fixed number of decimals and
// the unit, however short: "1.23 s", "0.000 s", "0.000012 s" (a run's or
// a trace's length in a message, the replay's messages).
func FixedSeconds(ns int64, decimals int) string {
	return strconv.FormatFloat(float64(ns)/1e9, 'f', decimals, 64) + " s"
}

// SecondsCell formats ns in seconds with 3 decimals and no unit: "1.234",
// "0.000" (cells of a table whose header says "s": the wait states).
func SecondsCell(ns int64) string {
	return fmt.Sprintf("%.3f", float64(ns)/1e9)
}

// SecondsCellFine formats a time in seconds like SecondsCell, with 6
// decimals under 10 ms so that short times keep their digits: "1.234",
// "0.001234", "0.000" (the pages' tables of MPI calls).
func SecondsCellFine(s float64) string {
	if s != 0 && math.Abs(s) < 0.01 {
		return fmt.Sprintf("%.6f", s)
	}
	return fmt.Sprintf("%.3f", s)
}

// SecondsOrMilliseconds formats a time in seconds with 3 decimals and the
// unit, in milliseconds under 0.1 s, and "-" for no value (NaN, ±Inf):
// "1.234 s", "12.345 ms" (the runtime model's predictions).
func SecondsOrMilliseconds(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case math.Abs(v) < 0.1 && v != 0:
		return fmt.Sprintf("%.3f ms", v*1e3)
	}
	return fmt.Sprintf("%.3f s", v)
}

// Bytes formats n bytes in binary units, one decimal: "512 B", "36.0 KiB",
// "12.0 GiB" (sizes of memory and file systems).
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// BytesSI formats a byte count in decimal units, two decimals: "512 B",
// "2.00 GB" (bytes moved: messages, GPU copies, bandwidths).
func BytesSI(v float64) string {
	units := []string{" B", " kB", " MB", " GB", " TB", " PB", " EB"}
	i := 0
	for v >= 999.5 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f%s", v, units[i])
	}
	return fmt.Sprintf("%.2f%s", v, units[i])
}

// Percent formats a fraction as a percentage for a sentence, as few
// digits as it needs: "100 %", "12 %", "1.5 %".
func Percent(f float64) string {
	p := 100 * f
	if p >= 10 || p == math.Trunc(p) {
		return fmt.Sprintf("%.0f %%", p)
	}
	return fmt.Sprintf("%.1f %%", p)
}

// PercentOneDecimal formats a fraction as a percentage with one decimal
// always: "100.0 %", "12.5 %", "1.5 %" (the notes on a DLB/TALP file).
func PercentOneDecimal(f float64) string {
	return fmt.Sprintf("%.1f %%", 100*f)
}
