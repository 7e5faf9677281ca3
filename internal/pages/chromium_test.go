package pages

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// chromiumFlags make headless Chromium quiet and offline: every host but
// 127.0.0.1 fails to resolve, so a page that tried to fetch anything from
// the network would fail (and the request log would show it).
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-default-apps", "--disable-extensions", "--mute-audio",
	"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
	"--enable-logging=stderr", "--v=0",
}

// phoneWidth is the CSS width of the phone check (an iPhone 12–15).
const phoneWidth = 390

// phoneHarness is the test's own page (not part of the site) that loads a
// site page in an iframe of a phone's width and writes the widths of the
// page's document and body into #widths once it has loaded.
const phoneHarness = `<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body style="margin:0">
<iframe id="f" style="width:%dpx;height:900px;border:0" src="/%s"></iframe><pre id="widths">none</pre>
<script>document.getElementById("f").addEventListener("load", function () {
  var d = this.contentDocument;
  document.getElementById("widths").textContent = "doc " + d.documentElement.scrollWidth + " body " + d.body.scrollWidth + " view " + d.documentElement.clientWidth;
});</script></body></html>`

// TestChromiumRendersSite loads every page of a site holding every page
// kind (writePageKinds: scaling with a model curve, history with a
// regression, partial run, GPU, MPI bytes and sizes, 10⁴ ranks in summary
// form; the EPOCH traces and the TALP samples when the shared data is
// there) in headless Chromium from a local HTTP server and checks: no
// console messages (the pages have no script, so any is an error such as
// a failed load), the rendered DOM shows the expected numbers in tables
// and chart labels, only the site's own files were requested, and at a
// phone's width (390 px) the page does not scroll sideways. Screenshots
// (1280 px and 390 px wide) are kept in $POPMON_TEST_ARTIFACTS (default:
// a temporary folder, printed with -v).
func TestChromiumRendersSite(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not on PATH: install it (Debian: apt-get install -y chromium) to run the browser test")
	}
	in, site := t.TempDir(), filepath.Join(t.TempDir(), "site")
	writePageKinds(t, in)
	epoch := false
	if traces, _ := filepath.Glob(filepath.Join(epochData, "epoch_*proc.prv.gz")); len(traces) == 5 {
		linkTraces(t, filepath.Join(in, "epoch"))
		epoch = true
	}
	if _, err := os.Stat(talpData); err == nil {
		copyTree(t, talpData, filepath.Join(in, "talp")) // more experiments
	}
	if _, err := Generate(Options{Input: in, Output: site, fit: handCurve(t), runTables: traceTables(t)}); err != nil {
		t.Fatal(err)
	}
	artifacts := os.Getenv("POPMON_TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/__phone" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, phoneHarness, phoneWidth, r.URL.Query().Get("page"))
			return
		}
		mu.Lock()
		requests = append(requests, r.URL.Path)
		mu.Unlock()
		// Serve files as they are (http.FileServer would redirect
		// .../index.html to .../).
		f, err := os.Open(filepath.Join(site, filepath.FromSlash(filepath.Clean("/"+r.URL.Path))))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, st.Name(), st.ModTime(), f)
	}))
	defer srv.Close()

	var pages []string
	err = filepath.WalkDir(site, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".html") {
			rel, _ := filepath.Rel(site, p)
			pages = append(pages, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func(url string, args ...string) (stdout, stderr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		profile := t.TempDir()
		all := append(append(append([]string{}, chromiumFlags...), "--user-data-dir="+profile), args...)
		all = append(all, url)
		cmd := exec.CommandContext(ctx, bin, all...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Errorf("chromium %s: %v\n%s", url, err, e.String())
		}
		return o.String(), e.String()
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 3) // the machine is shared
	doms := make([]string, len(pages))
	phones := make([]string, len(pages))
	logs := make([]string, len(pages))
	for i, page := range pages {
		wg.Add(1)
		go func(i int, page string) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var l1, l2 string
			doms[i], l1 = run(srv.URL+"/"+page, "--dump-dom")
			phones[i], l2 = run(srv.URL+"/__phone?page="+page, "--dump-dom")
			logs[i] = l1 + l2
			name := strings.ReplaceAll(strings.TrimSuffix(page, ".html"), "/", "_")
			for _, shot := range []struct {
				file, size string
			}{{name + ".png", "1280,2400"}, {name + ".phone.png", fmt.Sprintf("%d,2400", phoneWidth)}} {
				p := filepath.Join(artifacts, shot.file)
				run(srv.URL+"/"+page, "--screenshot="+p, "--window-size="+shot.size, "--hide-scrollbars")
				if st, err := os.Stat(p); err != nil || st.Size() == 0 {
					t.Errorf("no screenshot %s of %s", shot.file, page)
				}
			}
		}(i, page)
	}
	wg.Wait()
	widths := regexp.MustCompile(`doc (\d+) body (\d+) view (\d+)`)
	seen := map[string]bool{}
	for i, page := range pages {
		for _, line := range strings.Split(logs[i], "\n") {
			if strings.Contains(line, "CONSOLE") {
				t.Errorf("%s: console message: %s", page, line)
			}
		}
		dom := doms[i]
		if !strings.Contains(dom, "</table>") {
			t.Errorf("%s: rendered DOM has no table", page)
		}
		if m := widths.FindStringSubmatch(phones[i]); m == nil {
			t.Errorf("%s: the phone-width check did not run:\n%s", page, truncate(phones[i], 400))
		} else {
			doc, _ := strconv.Atoi(m[1])
			body, _ := strconv.Atoi(m[2])
			view, _ := strconv.Atoi(m[3])
			if i == 0 {
				t.Logf("%s at %d px: %s", page, phoneWidth, m[0])
			}
			if doc > view || body > view {
				t.Errorf("%s at %d px: the page scrolls sideways (document %d px, body %d px wide, viewport %d px)", page, phoneWidth, doc, body, view)
			}
		}
		exp := strings.TrimSuffix(page, "/index.html")
		seen[exp] = true
		for _, w := range kindWants[exp] {
			if !strings.Contains(dom, w) {
				t.Errorf("%s: rendered DOM lacks %q", page, w)
			}
		}
		switch exp {
		case "strong":
			for id, w := range map[string]string{"parallel_efficiency": "0.75", "global_efficiency": "0.83", "speedup": "1.67", "elapsed_s": "6.000"} {
				if got := cellText(t, dom, "Global", id, 1); got != w {
					t.Errorf("rendered %s = %s, want %s", id, got, w)
				}
				if id != "elapsed_s" {
					for _, labels := range chartLabels(dom, "Global", id) {
						if labels[len(labels)-1] != w {
							t.Errorf("rendered chart label of %s = %v, want … %s", id, labels, w)
						}
					}
				}
			}
		case "epoch":
			for _, id := range []string{"global_efficiency", "parallel_efficiency", "computation_scalability", "speedup"} {
				want := strings.Join(tableRow(t, dom, "Global", id, 5), " ")
				charts := chartLabels(dom, "Global", id)
				for _, got := range charts {
					if strings.Join(got, " ") != want {
						t.Errorf("epoch: rendered chart labels of %s %v, table %s", id, got, want)
					}
				}
				if len(charts) == 0 {
					t.Errorf("epoch: no rendered chart labels of %s", id)
				}
			}
		}
	}
	for exp := range kindWants {
		if !seen[exp] {
			t.Errorf("page kind %s was not rendered", exp)
		}
	}
	if epoch && !seen["epoch"] {
		t.Error("the EPOCH page was not rendered")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range requests {
		rel := strings.TrimPrefix(p, "/")
		if _, err := os.Stat(filepath.Join(site, filepath.FromSlash(rel))); err != nil || rel == "" {
			t.Errorf("request for %s, which is not a file of the site", p)
		}
	}
	if len(requests) < len(pages) {
		t.Errorf("only %d requests for %d pages", len(requests), len(pages))
	}
	t.Logf("%d pages rendered, %d requests, screenshots in %s", len(pages), len(requests), artifacts)
}

// copyTree copies the *.json files below src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
