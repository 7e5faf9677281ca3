package model

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func near(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > rel*math.Abs(want) {
		t.Errorf("%s = %.10g, want %.10g (±%g relative)", what, got, want, rel)
	}
}

// TestFitProjectionExact: data generated exactly from each projection
// are fitted back to their parameters.
func TestFitProjectionExact(t *testing.T) {
	xs := []float64{1, 2, 4, 8}
	for _, tc := range []struct {
		p     Projection
		x0, f float64
	}{
		{ProjAmdahl, 100, 0.9},
		{ProjAmdahl, 98, 0.3},
		{ProjPipe, 100, 0.55},
		{ProjPipe, 95, 0.2},
		{ProjLinear, 90, 0.5},
	} {
		ys := make([]float64, len(xs))
		for i, x := range xs {
			ys[i] = tc.p.Eval(x, tc.x0, tc.f)
		}
		x0, f := fitProjection(tc.p, xs, ys, weights(len(xs)))
		near(t, string(tc.p)+" x0", x0, tc.x0, 1e-7)
		near(t, string(tc.p)+" f", f, tc.f, 1e-6)
	}
}

// TestFitProjectionBounds: a falling line hits the bound f = 0 of
// basicanalysis's linear fit, and x0 is then the weighted mean: with
// weights 100, 1, 1 on y = 100, 90, 80, x0 = (10000+90+80)/102 = 99.70588.
// An amdahl fit of a rising curve hits f = 1 (the constant x0): the
// weighted mean again.
func TestFitProjectionBounds(t *testing.T) {
	xs := []float64{1, 2, 4}
	ys := []float64{100, 90, 80}
	x0, f := fitProjection(ProjLinear, xs, ys, weights(3))
	near(t, "linear x0", x0, 10170.0/102, 1e-12)
	if f != 0 {
		t.Errorf("linear f = %g, want 0 (bound)", f)
	}
	x0, f = fitProjection(ProjAmdahl, xs, []float64{80, 90, 100}, weights(3))
	near(t, "amdahl x0", x0, (8000.0+90+100)/102, 1e-9)
	near(t, "amdahl f", f, 1, 1e-9)
}

// EPOCH model factors (modelfactors.csv of ../shared/data/pypop, percent)
// and raw data, P = 1, 2, 4, 8, 16.
var (
	epP      = []int{1, 2, 4, 8, 16}
	epLB     = []float64{100.000000, 99.760930, 98.687584, 98.280683, 99.248259}
	epCE     = []float64{99.925583, 99.616405, 98.644580, 97.382042, 95.871892}
	epCS     = []float64{100.000000, 95.500319, 92.390414, 81.340933, 61.436394}
	epRT     = []float64{21898659.14, 11528373.56, 6082352.21, 3513565.33, 2339560.72}
	epUMax   = []float64{21882362.82, 11484151.34, 5999910.80, 3421581.67, 2242981.13}
	epUTot   = []float64{21882362.82, 22913392.37, 23684668.07, 26902030.73, 35617915.65}
	epInstr  = []float64{84790848422, 87640358419, 88518412143, 90063308642, 93158874793}
	epCycles = []float64{45294421893, 46855679955, 47406198069, 51191361663, 60494538119}
)

func epochPoints() []Point {
	var pts []Point
	for i, p := range epP {
		lb, ce, cs := epLB[i]/100, epCE[i]/100, epCS[i]/100
		pts = append(pts, Point{CPUs: p, Processes: p, Source: "epoch", Reference: i == 0,
			ElapsedS: epRT[i] / 1e6, UsefulS: epUTot[i] / 1e6, UsefulMaxS: epUMax[i] / 1e6,
			Instructions: epInstr[i], Cycles: epCycles[i], HasCounters: true,
			Factors: map[string]float64{IDLoadBalance: lb, IDCommEfficiency: ce, IDParallelEfficiency: lb * ce,
				IDCompScalability: cs, IDGlobalEfficiency: lb * ce * cs},
			Parts: []Part{{Kind: PartUseful, Name: "useful computation", PerProcessS: epUTot[i] / 1e6 / float64(p)}},
		})
	}
	return pts
}

// TestEPOCHReference compares Fit with an independent reference computed
// by testdata/reference.py (pure python3: f by
// brute force on a 1e-5 grid of [0, 1] refined by ternary search, x0
// closed-form; the laws by explicit leave-one-out), from the
// modelfactors.csv values above, fitting P = 1, 2, 4:
//
//	amdahl  LB x0=100.0011946 f=0.995772582; CE 99.92630065/0.9957947929; CS 99.98994328/0.9702370169
//	        T(8)=3.506041 s, T(16)=2.238212 s
//	pipe    T(8)=3.060497 s, T(16)=1.542044 s (LB f=0.5068574068)
//	linear  every slope at the bound 0: T(8)=2.741431 s, T(16)=1.370715 s
//	runtime Amdahl, T1 fixed, relative least squares: s=0.038749, T(8)=3.479809 s, T(16)=2.164177 s
//	components: instructions log2 (a=85119424467.5, b=1863781860.5), I(16)=92574551909.5 (−0.627 %),
//	        LB linear, rest √x; T(8)=3.267542 s, T(16)=1.873867 s
func TestEPOCHReference(t *testing.T) {
	r, err := Fit(epochPoints(), Options{Holdout: []int{8, 16}, Predict: []int{32}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{
		CurveFactorsAmdahl: {3.506041, 2.238212},
		CurveFactorsPipe:   {3.060497, 1.542044},
		CurveFactorsLinear: {2.741431, 1.370715},
		CurveRuntimeAmdahl: {3.479809, 2.164177},
		CurveComponents:    {3.267542, 1.873867},
	}
	for id, w := range want {
		c := r.Curve(id)
		if !c.OK() {
			t.Fatalf("curve %s not fitted: %s", id, c.Err)
		}
		near(t, id+" T(8)", c.Time(8), w[0], 1e-5)
		near(t, id+" T(16)", c.Time(16), w[1], 1e-5)
		m, ok := r.Prediction(16, id)
		if !ok {
			t.Fatalf("no prediction at 16 for %s", id)
		}
		near(t, id+" rel err at 16", float64(m.RelErr), w[1]/2.33956072-1, 1e-4)
	}
	near(t, "runtime s", r.Curve(CurveRuntimeAmdahl).Params["s"], 0.038749, 1e-4)
	near(t, "runtime-amdahl speedup(16)", r.Curve(CurveRuntimeAmdahl).Speedup(16), 21.89865914/2.164177, 1e-5)
	for _, f := range r.Factors {
		if f.Projection == ProjAmdahl && f.Factor == IDLoadBalance {
			near(t, "amdahl LB x0", f.X0, 100.0011946, 1e-8)
			near(t, "amdahl LB f", f.F, 0.995772582, 1e-7)
		}
		if f.Projection == ProjPipe && f.Factor == IDLoadBalance {
			near(t, "pipe LB f", f.F, 0.5068574068, 1e-7)
		}
		if f.Projection == ProjLinear && f.F != 0 {
			t.Errorf("linear %s f = %g, want the bound 0", f.Factor, f.F)
		}
	}
	ins := r.Components.Part(CompInstructions)
	if ins.Fit.Law != LawLog {
		t.Errorf("instruction law %s, want log2", ins.Fit.Law)
	}
	near(t, "I(16)", ins.Fit.At(16), 92574551909.5, 1e-9)
	if len(ins.Holdout) != 2 {
		t.Fatalf("instruction holdout = %+v", ins.Holdout)
	}
	near(t, "I(16) error", ins.Holdout[1].RelErr, -0.006272, 1e-3)
	ipc := r.Components.Part(CompIPC)
	if !ipc.Constant || len(ipc.Holdout) != 2 {
		t.Fatalf("IPC component %+v", ipc)
	}
	near(t, "IPC held", ipc.Fit.A, 1.867233, 1e-6)
	near(t, "IPC measured at 16", ipc.Holdout[1].Measured, 1.539955, 1e-6)
	if r.Components.Comm.Missing == "" {
		t.Error("no call profiles: the communication fits should say what is missing")
	}
	// 32 is predicted by every curve, with no measurement.
	if len(r.Predictions) != 3 || r.Predictions[2].CPUs != 32 || r.Predictions[2].MeasuredS.Valid() {
		t.Errorf("predictions = %+v", r.Predictions)
	}
	near(t, "amdahl T(32)", r.Predictions[2].Models[0].TimeS.float(), 1.682298, 1e-5)
	// JSON encodes NaN as null and keeps the stable ids.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"id":"factors-amdahl"`, `"measured_s":null`, `"curve":"runtime-amdahl"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("JSON lacks %s", s)
		}
	}
}

func (n Num) float() float64 { return float64(n) }

// TestRuntimeAmdahlExact: runs of T(x) = 10·(0.2 + 0.8/x) give s = 0.2
// and T(8) = 10·(0.2 + 0.1) = 3 exactly; the leave-one-out error is 0.
func TestRuntimeAmdahlExact(t *testing.T) {
	var pts []Point
	for _, x := range []int{1, 2, 4, 8} {
		pts = append(pts, Point{CPUs: x, ElapsedS: 10 * (0.2 + 0.8/float64(x)), UsefulS: 10})
	}
	r, err := Fit(pts, Options{Models: []string{"runtime"}, Holdout: []int{8}})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Curve(CurveRuntimeAmdahl)
	near(t, "s", c.Params["s"], 0.2, 1e-9)
	near(t, "T(8)", c.Time(8), 3, 1e-9)
	if float64(c.LOORelErr) > 1e-9 || float64(c.R2) != 1 {
		t.Errorf("LOO %v R² %v, want 0 and 1", c.LOORelErr, c.R2)
	}
	// Anchored at 2 CPUs, the same law is found.
	r, err = Fit(pts[1:], Options{Models: []string{"runtime"}})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "s from 2,4,8", r.Curve(CurveRuntimeAmdahl).Params["s"], 0.2, 1e-9)
}

// TestSameCPUs: of two runs with 2 CPUs the later one is used (its
// runtime 12 s instead of 11.53 s moves T(2)), and a note says so.
func TestSameCPUs(t *testing.T) {
	pts := epochPoints()[:3]
	later := pts[1]
	later.Source, later.ElapsedS = "later", 12
	r, err := Fit(append(pts, later), Options{Models: []string{"runtime"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 3 || r.Points[1].Source != "later" || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "the models use later only") {
		t.Errorf("points %v notes %q", cpusOf(r.Points), r.Notes)
	}
}

func TestFitErrors(t *testing.T) {
	pts := epochPoints()
	for _, tc := range []struct {
		name string
		pts  []Point
		opt  Options
		want string
	}{
		{"too few", pts[:3], Options{Holdout: []int{4}}, "at least 3"},
		{"unknown holdout", pts, Options{Holdout: []int{3}}, "no run has 3 CPUs"},
		{"model", pts, Options{Models: []string{"cubic"}}, `unknown model "cubic"`},
	} {
		_, err := Fit(tc.pts, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestChooseLaw: y = 3 + 2·log2 x is fitted exactly by log2 (LOO error 0)
// and chosen; y = 5 everywhere is const.
func TestChooseLaw(t *testing.T) {
	xs := []float64{1, 2, 4, 8}
	ys := []float64{3, 5, 7, 9}
	best, all := chooseLaw(xs, ys)
	if best.Law != LawLog || len(all) != 4 {
		t.Fatalf("law %s (%d tried), want log2", best.Law, len(all))
	}
	near(t, "a", best.A, 3, 1e-12)
	near(t, "b", best.B, 2, 1e-12)
	near(t, "at 16", best.At(16), 11, 1e-12)
	best, _ = chooseLaw(xs, []float64{5, 5, 5, 5})
	if best.Law != LawConst {
		t.Errorf("constant data: law %s", best.Law)
	}
}

// TestCommFits: samples generated from T = 2e-9·S^1.5 + 1e-5 give back
// b = 1.5 and R² = 1; T = 3e-6·log2 x + 1e-9·S + 2e-6 is recovered by
// the collective fit.
func TestCommFits(t *testing.T) {
	var p2p, coll []Sample
	for _, s := range []float64{64, 1024, 4096, 65536} {
		p2p = append(p2p, Sample{X: 4, Bytes: s, TimeS: 2e-9*math.Pow(s, 1.5) + 1e-5, Weight: 10})
	}
	f, ok := FitP2P(p2p)
	if !ok {
		t.Fatal("p2p fit failed")
	}
	near(t, "p2p b", f.B, 1.5, 1e-9)
	near(t, "p2p a", f.A, 2e-9, 1e-6)
	near(t, "p2p c", f.C, 1e-5, 1e-6)
	if float64(f.R2) < 1-1e-9 {
		t.Errorf("p2p R² %v", f.R2)
	}
	for _, x := range []float64{2, 4, 8, 16} {
		for _, s := range []float64{8, 800} {
			coll = append(coll, Sample{X: x, Bytes: s, TimeS: 3e-6*math.Log2(x) + 1e-9*s + 2e-6, Weight: 1})
		}
	}
	f, ok = FitColl(coll)
	if !ok {
		t.Fatal("collective fit failed")
	}
	near(t, "coll a", f.A, 3e-6, 1e-6)
	near(t, "coll b", f.B, 1e-9, 1e-6)
	near(t, "coll c", f.C, 2e-6, 1e-6)
	if _, ok := FitColl(coll[:3]); ok {
		t.Error("3 samples (2 sizes, 2 CPU counts) are too few to fit 3 coefficients and judge the fit")
	}
	// One size: b is not identified and left out.
	one := []Sample{{X: 2, Bytes: 8, TimeS: 5e-6, Weight: 1}, {X: 4, Bytes: 8, TimeS: 8e-6, Weight: 1}, {X: 16, Bytes: 8, TimeS: 14e-6, Weight: 1}}
	f, ok = FitColl(one)
	if !ok || f.B != 0 || !strings.Contains(f.Formula, "b not identified") {
		t.Fatalf("one size: %+v %v", f, ok)
	}
	near(t, "one-size a", f.A, 3e-6, 1e-9)
	near(t, "one-size c", f.C, 2e-6, 1e-9)
	// From call profiles: with bytes the fits are made, without them the
	// result says what is missing.
	var pts []Point
	for i, x := range []int{2, 4, 8, 16} {
		pts = append(pts, Point{CPUs: x, Calls: []Call{
			{Name: "MPI_Allreduce", Calls: 100, TimeS: 100 * (3e-6*math.Log2(float64(x)) + 1e-9*float64(int64(8)<<i) + 2e-6), BytesSent: 100 * (int64(8) << i)},
		}})
	}
	cf := fitComm(pts)
	if len(cf.Fits) != 1 || cf.Fits[0].ID != "collective" {
		t.Fatalf("fits %+v (missing %q)", cf.Fits, cf.Missing)
	}
	near(t, "profile coll a", cf.Fits[0].A, 3e-6, 1e-6)
	for i := range pts {
		pts[i].Calls[0].BytesSent = 0
	}
	if cf := fitComm(pts); len(cf.Fits) != 0 || !strings.Contains(cf.Missing, "no bytes per call") {
		t.Errorf("without bytes: %+v", cf)
	}
}

// TestKernels: per-process times 8, 4, 2 s at 1, 2, 4 CPUs fall as 1/x
// (α = −1); 0.1, 0.2, 0.4 s grow as x (α = 1) and never fall; 0.3 s
// flat (α = 0) is non-scalable too; 0.0001 s growing is below the 0.1 %
// share and not listed.
func TestKernels(t *testing.T) {
	var pts []Point
	for i, x := range []int{1, 2, 4} {
		f := float64(int(1) << i)
		pts = append(pts, Point{CPUs: x, ElapsedS: 10, Parts: []Part{
			{PartUseful, "useful computation", 8 / f},
			{PartMPI, "MPI_Bcast", 0.1 * f},
			{PartRegion, "io", 0.3},
			{PartMPI, "MPI_Comm_rank", 0.0001 * f},
		}})
	}
	ks := kernels(pts, 0.05)
	byName := map[string]Kernel{}
	for _, k := range ks {
		byName[k.Name] = k
	}
	u := byName["useful computation"]
	near(t, "useful α", float64(u.Exponent), -1, 1e-12)
	if u.NonScalable || !u.Key || u.NeverFalls {
		t.Errorf("useful: %+v", u)
	}
	near(t, "useful share", u.Share, 0.2, 1e-12)
	b := byName["MPI_Bcast"]
	near(t, "bcast α", float64(b.Exponent), 1, 1e-12)
	if !b.NonScalable || !b.NeverFalls || b.Key {
		t.Errorf("bcast: %+v", b)
	}
	if io := byName["io"]; !io.NonScalable || math.Abs(float64(io.Exponent)) > 1e-12 {
		t.Errorf("io: %+v", io)
	}
	if cr := byName["MPI_Comm_rank"]; cr.Listed() {
		t.Errorf("Comm_rank (share 0.004 %%) listed: %+v", cr)
	}
	if ks[len(ks)-1].Name != "MPI_Comm_rank" {
		t.Errorf("unlisted kernels come last: %v", ks)
	}
}

func TestRSquared(t *testing.T) {
	// ys 1,2,3 (mean 2, SStot 2), predictions 1,2,4: SSres 1, R² 0.5.
	near(t, "R²", rSquared([]float64{1, 2, 3}, []float64{1, 2, 4}), 0.5, 1e-12)
	if !math.IsNaN(rSquared([]float64{2, 2}, []float64{1, 2})) {
		t.Error("constant data with errors: R² should be undefined")
	}
}

// TestCommCall checks the communication models' classes of MPI calls,
// taken from trace.CallKind.
func TestCommCall(t *testing.T) {
	for _, c := range []struct {
		name      string
		p2p, coll bool
	}{
		{"MPI_Send", true, false}, {"MPI_Irecv", true, false}, {"MPI_Sendrecv_replace", true, false},
		{"MPI_Allreduce", false, true}, {"MPI_Reduce_scatter_block", false, true}, {"MPI_Scatterv", false, true},
		{"MPI_Barrier", false, false}, {"MPI_Neighbor_alltoall", false, false}, {"MPI_Iallreduce", false, false},
		{"MPI_Wait", false, false}, {"MPI_Comm_rank", false, false}, {"not_mpi", false, false},
	} {
		if p2p, coll := commCall(c.name); p2p != c.p2p || coll != c.coll {
			t.Errorf("commCall(%s) = %v, %v, want %v, %v", c.name, p2p, coll, c.p2p, c.coll)
		}
	}
}
