package perfetto

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestChromiumParses loads an export in headless Chromium (the browser
// the Perfetto UI and chrome://tracing run in): a page embeds the JSON,
// parses it with the browser's JSON.parse and checks the trace-event
// rules in JavaScript (every X has dur ≥ 0, one s and one f per flow id,
// process_name records), then writes its verdict into the DOM. The
// Perfetto UI itself is not loaded (it would need the network).
func TestChromiumParses(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not on PATH: install it (Debian: apt-get install -y chromium) to run the browser test")
	}
	var js bytes.Buffer
	if err := Write(&js, pingPong(3)); err != nil {
		t.Fatal(err)
	}
	data := strings.ReplaceAll(js.String(), "</", `<\/`)
	page := `<!doctype html><html><body><script type="application/json" id="t">` + data + `</script>
<p id="r">not run</p>
<script>
const r = document.getElementById("r");
try {
  const t = JSON.parse(document.getElementById("t").textContent);
  const ev = t.traceEvents, s = {}, f = {};
  let bad = 0, names = 0, x = 0;
  for (const e of ev) {
    if (e.ph === "X") { x++; if (!(e.dur >= 0)) bad++; }
    if (e.ph === "s") s[e.id] = (s[e.id] || 0) + 1;
    if (e.ph === "f") { f[e.id] = (f[e.id] || 0) + 1; if (e.bp !== "e") bad++; }
    if (e.ph === "M" && e.name === "process_name") names++;
  }
  for (const id in s) if (s[id] !== 1 || f[id] !== 1) bad++;
  r.textContent = "parsed " + ev.length + " events, " + x + " slices, " + Object.keys(s).length + " flows, " + names + " processes, " + bad + " problems";
} catch (e) { r.textContent = "error " + e; }
</script></body></html>`
	dir := t.TempDir()
	file := filepath.Join(dir, "check.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+file)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	want := "6 flows, 2 processes, 0 problems"
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "parsed ") {
		i := strings.Index(out.String(), `id="r"`)
		t.Errorf("chromium's verdict lacks %q: %.200s", want, out.String()[max(0, i):])
	}
}
