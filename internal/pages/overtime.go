package pages

import (
	"fmt"
	"html/template"
	"strconv"

	"github.com/popmon/popmon/internal/report"
	"github.com/popmon/popmon/internal/runs"
	"github.com/popmon/popmon/internal/units"
	"github.com/popmon/popmon/pop"
)

// overTimeChart draws region's efficiencies in each interval of run r's
// time series (popmon run samples every process each second): one line
// per efficiency over the seconds since MPI_Init. Without a series, the
// note says why.
func overTimeChart(r *runs.Run, region string, model pop.Model) (template.HTML, string) {
	lines, end, note := overTimeLines(r, region, model)
	if len(lines) == 0 {
		return "", note
	}
	ch := LineChart{
		Title:  fmt.Sprintf("%s: efficiencies per %s interval, %s", region, units.Seconds(float64(r.Measurement.Series.IntervalNS)/1e9), r.Label),
		XLabel: "time since MPI_Init (s)", YLabel: "efficiency", YFixed: true, YMin: 0, YMax: 1,
		XTick:  func(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) },
		Series: lines,
	}
	ch.XTicks, _, _ = NiceTicks(0, end, 6)
	return template.HTML(ch.SVG()), note
}

// overTimeLines returns the lines of overTimeChart (a point at each
// interval's middle), the end of the last interval in seconds, and a note:
// why there are no lines, or what a reader must know about them.
func overTimeLines(r *runs.Run, region string, model pop.Model) ([]Series, float64, string) {
	m := r.Measurement
	switch {
	case m == nil:
		return nil, 0, "TALP JSON files hold no time series; measure with popmon run to see the efficiencies second by second."
	case m.Series == nil:
		return nil, 0, "The newest run has no time series: popmon run samples every process each second; imported traces, runs measured with popmon exec and runs shorter than one interval have none."
	}
	ivs, err := pop.OverTime(m, model, region)
	if err != nil {
		return nil, 0, fmt.Sprintf("No time series for region %s in the newest run (%v).", region, err)
	}
	var lines []Series
	for _, col := range report.OverTimeColumns {
		s := Series{Name: col.Head}
		for _, iv := range ivs {
			if v, ok := iv.Values[col.ID]; ok {
				s.Points = append(s.Points, Point{iv.StartS + iv.ElapsedS/2, v})
			}
		}
		if len(s.Points) > 0 {
			lines = append(lines, s)
		}
	}
	if len(lines) == 0 {
		return nil, 0, fmt.Sprintf("No efficiency of region %s could be computed in any interval of the newest run.", region)
	}
	last := ivs[len(ivs)-1]
	note := ""
	if m.Partial != nil {
		note = "The run is partial: its last interval ends where the measurement was cut."
	}
	return lines, last.StartS + last.ElapsedS, note
}
