package pages

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
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

// TestChromiumRendersSite loads every page of a generated site in headless
// Chromium from a local HTTP server and checks: no console messages (the
// pages have no script, so any is an error such as a failed load), the
// rendered DOM shows the hand-computed table values, only the site's own
// files were requested. Screenshots are kept in $POPMON_TEST_ARTIFACTS
// (default: a temporary folder).
func TestChromiumRendersSite(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not on PATH: install it (Debian: apt-get install -y chromium) to run the browser test")
	}
	in, site := t.TempDir(), filepath.Join(t.TempDir(), "site")
	strongPair(t, filepath.Join(in, "strong"))
	if _, err := os.Stat(talpData); err == nil {
		copyTree(t, talpData, filepath.Join(in, "talp")) // more experiments
	}
	if _, err := Generate(Options{Input: in, Output: site}); err != nil {
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
	run := func(page string, args ...string) (stdout, stderr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		profile := t.TempDir()
		all := append(append(append([]string{}, chromiumFlags...), "--user-data-dir="+profile), args...)
		all = append(all, srv.URL+"/"+page)
		cmd := exec.CommandContext(ctx, bin, all...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %s: %v\n%s", page, err, e.String())
		}
		return o.String(), e.String()
	}
	var wg sync.WaitGroup
	doms := make([]string, len(pages))
	logs := make([]string, len(pages))
	for i, page := range pages {
		wg.Add(1)
		go func(i int, page string) {
			defer wg.Done()
			doms[i], logs[i] = run(page, "--dump-dom")
			shot := filepath.Join(artifacts, strings.ReplaceAll(strings.TrimSuffix(page, ".html"), "/", "_")+".png")
			run(page, "--screenshot="+shot, "--window-size=1280,2000", "--hide-scrollbars")
			if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
				t.Errorf("no screenshot of %s", page)
			}
		}(i, page)
	}
	wg.Wait()
	for i, page := range pages {
		for _, line := range strings.Split(logs[i], "\n") {
			if strings.Contains(line, "CONSOLE") {
				t.Errorf("%s: console message: %s", page, line)
			}
		}
		if !strings.Contains(doms[i], "</table>") {
			t.Errorf("%s: rendered DOM has no table", page)
		}
		if page == "strong/index.html" {
			for id, w := range map[string]string{"parallel_efficiency": "0.75", "global_efficiency": "0.83", "speedup": "1.67", "elapsed_s": "6.000"} {
				if got := cellText(t, doms[i], "Global", id, 1); got != w {
					t.Errorf("rendered %s = %s, want %s", id, got, w)
				}
			}
			if !strings.Contains(doms[i], "<svg") {
				t.Error("rendered page has no chart")
			}
		}
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
