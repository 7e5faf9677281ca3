package model_test

import (
	"fmt"

	"github.com/popmon/popmon/internal/model"
)

// ExampleFit fits Amdahl's law on the runtime to three runs and evaluates
// the curve at any CPU count, as a chart would (internal/pages builds the
// points with runs.ModelPoints).
func ExampleFit() {
	var pts []model.Point
	for _, x := range []int{1, 2, 4} {
		pts = append(pts, model.Point{CPUs: x, ElapsedS: 10 * (0.2 + 0.8/float64(x)), UsefulS: 8})
	}
	res, err := model.Fit(pts, model.Options{Models: []string{"runtime"}, Predict: []int{8}})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := res.Curve(model.CurveRuntimeAmdahl)
	for _, x := range []float64{8, 16, 1000} {
		fmt.Printf("T(%g) = %.3f s, speedup %.2f\n", x, c.Time(x), c.Speedup(x))
	}
	fmt.Printf("s = %.2f\n", c.Params["s"])
	// Output:
	// T(8) = 3.000 s, speedup 3.33
	// T(16) = 2.500 s, speedup 4.00
	// T(1000) = 2.008 s, speedup 4.98
	// s = 0.20
}
