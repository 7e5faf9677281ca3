package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 11 §4: watching a running job (popmon run --serve, popmon query,
// popmon top's keys).

// waitFor polls f every 100 ms until it returns true or timeout passes.
func waitFor(timeout time.Duration, f func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if f() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// fetch GETs u and returns the status, content type and body.
func fetch(u string) (int, string, string, error) {
	resp, err := httpClient.Get(u)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b), err
}

// scrape is one /metrics answer: the value of every series and the type
// of every family.
type scrape struct {
	text   string
	values map[string]float64 // series text (name{labels}) → value
	types  map[string]string
}

func parseScrape(t *testing.T, text string) scrape {
	t.Helper()
	s := scrape{text: text, values: map[string]float64{}, types: map[string]string{}}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			s.types[f[2]] = f[3]
		}
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Errorf("bad sample line %q", line)
			continue
		}
		s.values[line[:i]] = v
	}
	return s
}

// family returns the metric name of a series text.
func family(series string) string {
	if i := strings.IndexByte(series, '{'); i >= 0 {
		return series[:i]
	}
	return series
}

// value returns the value of the series of name whose labels include all
// of labels (`region="Global"`, ...).
func (s scrape) value(name string, labels ...string) (float64, bool) {
	for k, v := range s.values {
		if family(k) != name {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(k, l)
		}
		if ok {
			return v, true
		}
	}
	return 0, false
}

// regionsLB returns the Global load balance of a popmon-report JSON text
// (/api/v1/regions, popmon query --format json) and its window.
func regionsLB(t *testing.T, text string) (float64, string) {
	t.Helper()
	var r struct {
		Format  string `json:"format"`
		Window  string `json:"window"`
		Regions []struct {
			Name    string             `json:"name"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"regions"`
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil || r.Format != "popmon-report" {
		t.Fatalf("not a popmon report (%v):\n%s", err, text)
	}
	for _, g := range r.Regions {
		if g.Name == "Global" {
			if lb, ok := g.Metrics["mpi_load_balance"]; ok {
				return lb, r.Window
			}
		}
	}
	t.Fatalf("no Global load balance:\n%s", text)
	return 0, ""
}

// TestServe: popmon run --serve on the imbalance example; /metrics, the
// JSON API, the textfile and popmon query agree with each other and with
// the design, promtool accepts the exposition, a real Prometheus scrapes
// it, and the server ends with the job.
func TestServe(t *testing.T) {
	for i, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			np := partialRanks(impl)
			design := float64(np+1) / float64(2*np)
			dir := t.TempDir()
			addrFile := filepath.Join(dir, "addr")
			textDir := filepath.Join(dir, "textfile")
			os.Mkdir(textDir, 0o755)
			s := startRun(t, impl, np, []string{"--serve", "127.0.0.1:0", "--serve-addr-file", addrFile,
				"--metrics-per-rank", "--prom-textfile", textDir}, nil, "imbalance", fmt.Sprint(partialK), "200")
			ended := false
			end := func() {
				if !ended {
					ended = true
					for _, pid := range s.ranks {
						syscall.Kill(pid, syscall.SIGKILL)
					}
					s.wait(t)
				}
			}
			defer end()
			var addr string
			if !waitFor(10*time.Second, func() bool {
				b, err := os.ReadFile(addrFile)
				addr = strings.TrimSpace(string(b))
				return err == nil && addr != ""
			}) {
				t.Fatalf("no address in %s\n%s", addrFile, s.se.String())
			}
			base := "http://" + addr

			// A view of every rank, 2 s into the run.
			var job struct {
				Running  int     `json:"running"`
				ElapsedS float64 `json:"elapsed_s"`
			}
			if !waitFor(15*time.Second, func() bool {
				code, _, body, err := fetch(base + "/api/v1/job")
				return err == nil && code == 200 && json.Unmarshal([]byte(body), &job) == nil && job.Running == np && job.ElapsedS >= 2
			}) {
				t.Fatalf("no view of %d running ranks: %+v\n%s", np, job, s.se.String())
			}

			code, ctype, body, err := fetch(base + "/metrics")
			if err != nil || code != 200 || ctype != "text/plain; version=0.0.4; charset=utf-8" {
				t.Fatalf("/metrics: %d %q %v", code, ctype, err)
			}
			first := parseScrape(t, body)
			lbAPI := func() float64 {
				code, _, body, err := fetch(base + "/api/v1/regions?window=run")
				if err != nil || code != 200 {
					t.Fatalf("/api/v1/regions: %d %v %s", code, err, body)
				}
				lb, w := regionsLB(t, body)
				if w != "run" {
					t.Errorf("window %q, want run", w)
				}
				return lb
			}
			api := lbAPI()
			gauge, ok := first.value("popmon_mpi_load_balance_ratio", `region="Global"`, `window="run"`)
			if !ok {
				t.Fatalf("no LB gauge:\n%s", body)
			}
			if math.Abs(api-gauge) > 0.01 || math.Abs(api-design) > 0.05 {
				t.Errorf("Global LB: API %.4f, gauge %.4f, want equal within 0.01 and %.3f ± 0.05", api, gauge, design)
			}
			if n, _ := first.value("popmon_processes", `state="running"`); int(n) != np {
				t.Errorf("popmon_processes running = %v, want %d", n, np)
			}

			// Counters never decrease; useful time grows.
			time.Sleep(2 * time.Second)
			_, _, body2, err := fetch(base + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			second := parseScrape(t, body2)
			counters, grew := 0, false
			for k, v1 := range first.values {
				if first.types[family(k)] != "counter" {
					continue
				}
				v2, ok := second.values[k]
				if !ok {
					t.Errorf("%s vanished from the second scrape", k)
					continue
				}
				counters++
				if v2 < v1 {
					t.Errorf("counter %s went from %v to %v", k, v1, v2)
				}
				if family(k) == "popmon_useful_seconds_total" && v2 > v1 {
					grew = true
				}
			}
			if counters < 4*np || !grew {
				t.Errorf("%d counters, useful time grew: %v", counters, grew)
			}

			t.Run("promtool", func(t *testing.T) {
				if _, err := exec.LookPath("promtool"); err != nil {
					t.Skip("promtool is not installed (Debian package prometheus; scripts/install-deps.sh test)")
				}
				files, _ := filepath.Glob(filepath.Join(textDir, "popmon_*.prom"))
				if len(files) != 1 {
					t.Fatalf("textfiles %v, want one", files)
				}
				tf, _ := os.ReadFile(files[0])
				for what, text := range map[string]string{"/metrics": body2, "textfile": string(tf)} {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					cmd := exec.CommandContext(ctx, "promtool", "check", "metrics")
					cmd.Stdin = strings.NewReader(text)
					out, err := cmd.CombinedOutput()
					cancel()
					if err != nil || len(strings.TrimSpace(string(out))) > 0 {
						t.Errorf("promtool check metrics on %s: %v\n%s", what, err, out)
					}
				}
			})

			t.Run("query", func(t *testing.T) {
				sessions, _ := filepath.Glob(filepath.Join(filepath.Dir(s.out), ".popmon-session-*"))
				if len(sessions) != 1 {
					t.Fatalf("session folders %v", sessions)
				}
				for _, w := range []string{"run", "4s"} { // 20 periods of the example: one late time slice weighs little
					so, se, code := popmon(t, nil, "query", "--format", "json", "--window", w, sessions[0])
					if code != 0 {
						t.Fatalf("query --window %s: exit %d\n%s%s", w, code, so, se)
					}
					lb, got := regionsLB(t, so)
					if got != w || math.Abs(lb-design) > 0.05 {
						t.Errorf("query --window %s: window %q LB %.3f, want %.3f ± 0.05", w, got, lb, design)
					}
				}
				so, se, code := popmon(t, nil, "query", "--region", "nope", sessions[0])
				if code != 3 || !strings.Contains(se, `no region "nope"`) {
					t.Errorf("query of an unknown region: exit %d\n%s%s", code, so, se)
				}
			})

			if i == 0 {
				t.Run("prometheus", func(t *testing.T) { checkPrometheus(t, addr, design) })
			}

			end()
			if _, _, _, err := fetch(base + "/metrics"); err == nil {
				t.Errorf("the server still answers after the job ended")
			}
			if files, _ := filepath.Glob(filepath.Join(textDir, "*")); len(files) != 0 {
				t.Errorf("textfiles left after the job: %v", files)
			}
		})
	}
}

// checkPrometheus runs a real Prometheus scraping addr every second and
// checks the load balance PromQL derives from the per-rank counters, and
// the gauge, against the design.
func checkPrometheus(t *testing.T, addr string, design float64) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not installed (Debian package prometheus; scripts/install-deps.sh test)")
	}
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	web := ln.Addr().String()
	ln.Close()
	cfg := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: popmon\n    static_configs:\n      - targets: ['%s']\n", addr)), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+web, "--log.level=warn")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	query := func(q string) ([]map[string]any, error) {
		code, _, body, err := fetch("http://" + web + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return nil, err
		}
		var r struct {
			Status string `json:"status"`
			Data   struct {
				Result []map[string]any `json:"result"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil || code != 200 || r.Status != "success" {
			return nil, fmt.Errorf("%d %v %s", code, err, body)
		}
		return r.Data.Result, nil
	}
	scalar := func(res []map[string]any) (float64, bool) {
		if len(res) != 1 {
			return 0, false
		}
		v, _ := res[0]["value"].([]any)
		if len(v) != 2 {
			return 0, false
		}
		s, _ := v[1].(string)
		x, err := strconv.ParseFloat(s, 64)
		return x, err == nil
	}
	// Six scrapes, for rate over 5 s.
	if !waitFor(30*time.Second, func() bool {
		res, err := query(`count_over_time(popmon_info[10s])`)
		n, ok := scalar(res)
		return err == nil && ok && n >= 6
	}) {
		t.Fatalf("Prometheus did not scrape %s six times\n%s", addr, logs.String())
	}
	const lbQuery = `avg(rate(popmon_useful_seconds_total{region="Global"}[5s])) / max(rate(popmon_useful_seconds_total{region="Global"}[5s]))`
	res, err := query(lbQuery)
	if lb, ok := scalar(res); err != nil || !ok || math.Abs(lb-design) > 0.05 {
		t.Errorf("%s = %v (%v, %v), want %.3f ± 0.05", lbQuery, lb, ok, err, design)
	}
	res, err = query(`popmon_mpi_load_balance_ratio{region="Global",window="60s"}`)
	if lb, ok := scalar(res); err != nil || !ok || math.Abs(lb-design) > 0.05 {
		t.Errorf("LB gauge in Prometheus = %v (%v, %v), want %.3f ± 0.05", lb, ok, err, design)
	}
	res, err = query(`popmon_info`)
	if err != nil || len(res) != 1 {
		t.Fatalf("popmon_info: %v %v", res, err)
	}
	labels, _ := res[0]["metric"].(map[string]any)
	if labels["job"] != "popmon" || labels["exported_job"] != nil || labels["exported_instance"] != nil || labels["session"] == nil {
		t.Errorf("popmon_info labels %v: want Prometheus's own job, no exported_*, a session", labels)
	}
}

// watchedJob starts the imbalance example under popmon run (midRun) and
// returns its size and session folder. At the test's end its ranks are
// killed: popmon run then assembles and removes its session and live
// folders (killing it too would leave them).
func watchedJob(t *testing.T, impl mpiImpl) (int, string) {
	t.Helper()
	np, s, _ := midRun(t, impl)
	t.Cleanup(func() {
		for _, pid := range s.ranks {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		s.wait(t)
	})
	return np, s.session(t)
}

// TestTopKeys: popmon top in a terminal (tmux): the Global row shows the
// designed load balance, r shows every rank's useful share, q quits with
// exit 0 and the terminal mode restored.
func TestTopKeys(t *testing.T) {
	impl := impls(t)[0]
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	np, session := watchedJob(t, impl)
	dir := t.TempDir()
	socket := "popmon-e2e-" + strconv.Itoa(os.Getpid())
	tmux := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
		return string(out), err
	}
	defer tmux("kill-server")
	script := fmt.Sprintf("stty -g > %[1]s/before; %[2]s top %[3]s; echo $? > %[1]s/rc; stty -g > %[1]s/after",
		dir, popmonBin, session)
	if out, err := tmux("new-session", "-d", "-s", "top", "-x", "100", "-y", "30", "sh", "-c", script); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	design := float64(np+1) / float64(2*np)
	var screen string
	start := time.Now()
	if !waitFor(5*time.Second, func() bool {
		screen, _ = tmux("capture-pane", "-p", "-t", "top")
		for _, line := range strings.Split(screen, "\n") {
			if f := strings.Fields(line); len(f) >= 10 && f[0] == "Global" {
				lb, err := strconv.ParseFloat(f[3], 64)
				return err == nil && math.Abs(lb-design) <= 0.05
			}
		}
		return false
	}) {
		t.Fatalf("no Global row with LB %.3f ± 0.05 within 5 s:\n%s", design, screen)
	}
	t.Logf("Global row after %v", time.Since(start).Round(time.Millisecond))

	tmux("send-keys", "-t", "top", "r")
	useful := map[int]float64{}
	if !waitFor(5*time.Second, func() bool {
		screen, _ = tmux("capture-pane", "-p", "-t", "top")
		if !strings.Contains(screen, "Ranks (Global") {
			return false
		}
		useful = map[int]float64{}
		for _, line := range strings.Split(screen, "\n") {
			f := strings.Fields(line)
			if len(f) < 5 || !strings.HasSuffix(f[2], "%") {
				continue
			}
			r, err1 := strconv.Atoi(f[0])
			u, err2 := strconv.ParseFloat(strings.TrimSuffix(f[2], "%"), 64)
			if err1 == nil && err2 == nil {
				useful[r] = u
			}
		}
		return len(useful) == np
	}) {
		t.Fatalf("no panel of %d ranks after r:\n%s", np, screen)
	}
	// Rank r works (r+1)·K per iteration: shares 1:2:…:np of the slowest.
	for r := 0; r < np; r++ {
		want := float64(r+1) / float64(np)
		if got := useful[r] / useful[np-1]; math.Abs(got-want) > 0.05 {
			t.Errorf("rank %d useful %.1f%%, %.3f of rank %d's, want %.3f ± 0.05\n%s", r, useful[r], got, np-1, want, screen)
		}
	}

	tmux("send-keys", "-t", "top", "q")
	var rc []byte
	if !waitFor(5*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "after"))
		rc, _ = os.ReadFile(filepath.Join(dir, "rc"))
		return err == nil && len(b) > 0
	}) {
		screen, _ = tmux("capture-pane", "-p", "-t", "top")
		t.Fatalf("popmon top did not quit on q:\n%s", screen)
	}
	if strings.TrimSpace(string(rc)) != "0" {
		t.Errorf("popmon top exited %q after q, want 0", rc)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "before"))
	after, _ := os.ReadFile(filepath.Join(dir, "after"))
	if len(before) == 0 || string(before) != string(after) {
		t.Errorf("terminal mode not restored: before %q, after %q", before, after)
	}
}

// TestServeCommand: popmon serve beside a running popmon run answers the
// designed load balance, and ends --linger after the job's processes.
func TestServeCommand(t *testing.T) {
	impl := impls(t)[0]
	np, s, _ := midRun(t, impl)
	killed := false
	kill := func() {
		if !killed {
			killed = true
			for _, pid := range s.ranks {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			s.wait(t)
		}
	}
	defer kill()
	sessions, _ := filepath.Glob(filepath.Join(filepath.Dir(s.out), ".popmon-session-*"))
	if len(sessions) != 1 {
		t.Fatalf("session folders %v", sessions)
	}
	addrFile := filepath.Join(t.TempDir(), "addr")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, popmonBin, "serve", "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--linger", "2s", sessions[0])
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var addr string
	if !waitFor(10*time.Second, func() bool {
		b, err := os.ReadFile(addrFile)
		addr = strings.TrimSpace(string(b))
		return err == nil && addr != ""
	}) {
		t.Fatalf("popmon serve wrote no address\n%s", out.String())
	}
	design := float64(np+1) / float64(2*np)
	var body string
	if !waitFor(5*time.Second, func() bool {
		code, _, b, err := fetch("http://" + addr + "/api/v1/regions?window=run&region=Global")
		body = b
		return err == nil && code == 200
	}) {
		t.Fatalf("no regions from popmon serve: %s\n%s", body, out.String())
	}
	if lb, w := regionsLB(t, body); w != "run" || math.Abs(lb-design) > 0.05 {
		t.Errorf("popmon serve: window %q LB %.3f, want run and %.3f ± 0.05", w, lb, design)
	}
	kill()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("popmon serve: %v\n%s", err, out.String())
		}
	case <-time.After(15 * time.Second):
		t.Errorf("popmon serve still runs 15 s after the job ended (--linger 2s)\n%s", out.String())
	}
}
