package pages

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkSafeFile fails when the site file at p is not valid UTF-8, holds a
// control character other than line feed and tab, or a bidi override.
func checkSafeFile(t *testing.T, p string) {
	t.Helper()
	s := readFile(t, p)
	if !utf8.ValidString(s) {
		t.Errorf("%s is not valid UTF-8", p)
	}
	for i, r := range s {
		if r != '\n' && r != '\t' && (r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069) {
			t.Errorf("%s: raw %U at byte %d: %q", p, r, i, s[max(0, i-30):min(len(s), i+30)])
			return
		}
	}
	low := strings.ToLower(s)
	for _, bad := range []string{"<script", "<img src=x", "onerror=alert"} {
		if i := strings.Index(low, bad); i >= 0 && !strings.HasPrefix(low[i:], "onerror=alert(1)&gt;") {
			t.Errorf("%s: raw %q: %q", p, bad, s[max(0, i-30):min(len(s), i+30)])
		}
	}
}

func TestHostileNamesInPages(t *testing.T) {
	// Experiment folders (names shown on the index and the pages), a
	// region name and the title carry hostile names. A folder name cannot
	// hold "/" or NUL.
	exps := []struct{ folder, shown string }{
		{"clear\x1b[2J", `clear\x1b[2J`},
		{"cr\rforged", `cr\rforged`},
		{"evil\u202etxt", `evil\u202etxt`},
		{"=cmd|' calc'!A0", "=cmd|&#39; calc&#39;!A0"},
		{"<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"},
		{"<script>alert(1)", "&lt;script&gt;alert(1)"},
		{"|a|b|", "|a|b|"},
		{"caf\xe9", `caf\xe9`},
		{strings.Repeat("a", 126) + "€"[:1], strings.Repeat("a", 126) + `\xe2`},
	}
	region := "r\x1b]0;owned\x07<script>\u202e"
	regionShown := `r\x1b]0;owned\x07&lt;script&gt;\u202e`
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "site")
	for _, e := range exps {
		dir := filepath.Join(in, e.folder)
		writeRun(t, dir, "run-1.json", synthRun(t0, 10, []string{"Global", region}, rank{10, 0}))
		writeRun(t, dir, "run-2.json", synthRun(t0.Add(1e9), 6, []string{"Global", region}, rank{5, 1}, rank{4, 2}))
	}
	res, err := Generate(Options{Input: in, Output: out, Title: "T\x1b[31m<b>", Regions: []string{"Global", region}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Experiments != len(exps) {
		t.Fatalf("%d experiments, want %d", res.Experiments, len(exps))
	}
	for _, f := range res.Files {
		p := filepath.Join(out, filepath.FromSlash(f))
		checkSafeFile(t, p)
		if strings.HasSuffix(f, ".html") {
			checkPage(t, p)
		}
	}
	index := readFile(t, filepath.Join(out, "index.html"))
	if !strings.Contains(index, `<title>T\x1b[31m&lt;b&gt;</title>`) {
		t.Errorf("index title not escaped:\n%s", index)
	}
	pages := ""
	for _, e := range exps {
		if !strings.Contains(index, ">"+e.shown+"</a>") {
			t.Errorf("index lacks experiment %q shown as %q", e.folder, e.shown)
		}
		pages += readFile(t, filepath.Join(out, slug(e.folder), "index.html"))
	}
	for _, want := range []string{
		">Region " + regionShown + "</h3>",
		`data-region="` + regionShown + `"`,
		// In the SVG charts, through esc.
		`<title>` + regionShown + `: useful and MPI time per process, 2xMPI 1xOpenMP</title>`,
	} {
		if !strings.Contains(pages, want) {
			t.Errorf("experiment pages lack %q", want)
		}
	}
}

func TestEscXML(t *testing.T) {
	tests := []struct{ in, want string }{
		{`<a href="x">&'`, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"},
		{"esc\x1b[2J", `esc\x1b[2J`},
		{"nl\nx", `nl\nx`},
		{"caf\xe9", `caf\xe9`},
		{"\u202e", `\u202e`},
	}
	for _, tt := range tests {
		if got := esc(tt.in); got != tt.want {
			t.Errorf("esc(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	checkXML(t, "chart", (&LineChart{Title: "t\x00\x1b<", Series: []Series{{Name: "s\x01", Points: []Point{{0, 1}, {1, 2}}}}}).SVG())
}

func TestShortCommit(t *testing.T) {
	for in, want := range map[string]string{
		"0123456789abcdef": "01234567",
		"abc":              "abc",
		"ééééééééé":        "éééééééé",
		"":                 "",
	} {
		if got := shortCommit(in); got != want {
			t.Errorf("shortCommit(%q) = %q, want %q", in, got, want)
		}
	}
}

// plantedSite generates a site of experiments a and b into a new output
// folder and returns the input and output folders and a folder outside
// the site that holds precious.txt and index.html (content "precious").
func plantedSite(t *testing.T) (in, out, outside string) {
	t.Helper()
	in, out, outside = t.TempDir(), filepath.Join(t.TempDir(), "site"), t.TempDir()
	strongPair(t, filepath.Join(in, "a"))
	strongPair(t, filepath.Join(in, "b"))
	if _, err := Generate(Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"precious.txt", "index.html", "badge.svg"} {
		if err := os.WriteFile(filepath.Join(outside, n), []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return in, out, outside
}

// replaceWithLink replaces p (a file or folder) by a symbolic link to
// target.
func replaceWithLink(t *testing.T, p, target string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func TestPagesRefusesSymlinks(t *testing.T) {
	tests := []struct {
		what string
		// plant changes the site out; it returns the link popmon must
		// name.
		plant func(t *testing.T, in, out, outside string) string
	}{
		{"site file links to a file outside", func(t *testing.T, in, out, outside string) string {
			p := filepath.Join(out, "index.html")
			replaceWithLink(t, p, filepath.Join(outside, "precious.txt"))
			return p
		}},
		{"site file links to a missing file outside", func(t *testing.T, in, out, outside string) string {
			p := filepath.Join(out, "badge.svg")
			replaceWithLink(t, p, filepath.Join(outside, "new.txt"))
			return p
		}},
		{"experiment folder links outside", func(t *testing.T, in, out, outside string) string {
			p := filepath.Join(out, "a")
			replaceWithLink(t, p, outside)
			return p
		}},
		{"experiment folder links to /", func(t *testing.T, in, out, outside string) string {
			p := filepath.Join(out, "a")
			replaceWithLink(t, p, "/")
			return p
		}},
		{"marker links outside", func(t *testing.T, in, out, outside string) string {
			p := filepath.Join(out, MarkerName)
			data := readFile(t, p)
			if err := os.WriteFile(filepath.Join(outside, "precious.txt"), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			replaceWithLink(t, p, filepath.Join(outside, "precious.txt"))
			return p
		}},
		{"stale experiment links outside", func(t *testing.T, in, out, outside string) string {
			// b went away from the input: its files would be removed,
			// but its folder now links outside.
			if err := os.RemoveAll(filepath.Join(in, "b")); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(out, "b")
			replaceWithLink(t, p, outside)
			return p
		}},
		{"hand-edited marker lists a file through a link", func(t *testing.T, in, out, outside string) string {
			marker := filepath.Join(out, MarkerName)
			if err := os.WriteFile(marker, []byte(readFile(t, marker)+"sub/precious.txt\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(out, "sub")
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			in, out, outside := plantedSite(t)
			link := tt.plant(t, in, out, outside)
			target, err := os.Readlink(link)
			if err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, outside)
			_, err = Generate(Options{Input: in, Output: out})
			var le *LinkError
			if !errors.As(err, &le) || le.Path != link {
				t.Fatalf("err = %v, want a LinkError naming %s", err, link)
			}
			for _, want := range []string{link + " is a symbolic link (to " + target + ")", "rm " + link} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			// The link is still there, and nothing outside changed.
			if got, err := os.Readlink(link); err != nil || got != target {
				t.Errorf("link now %q (%v), want %q", got, err, target)
			}
			if after := snapshot(t, outside); after != before {
				t.Errorf("the folder outside changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// snapshot describes the files of dir (names and contents).
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name() + "=" + string(data) + ";")
	}
	return b.String()
}

func TestPagesOutputLinkItself(t *testing.T) {
	// The output folder named by the user may itself be a link to a
	// folder: the site is written into the folder it points to.
	in := t.TempDir()
	strongPair(t, filepath.Join(in, "a"))
	dest := t.TempDir()
	out := filepath.Join(t.TempDir(), "site")
	if err := os.Symlink(dest, out); err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 2; run++ {
		if _, err := Generate(Options{Input: in, Output: out}); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
	if !strings.Contains(readFile(t, filepath.Join(dest, "a", "index.html")), "<h1>a</h1>") {
		t.Error("the site was not written into the linked folder")
	}
	// No temporary file is left behind.
	for _, d := range []string{dest, filepath.Join(dest, "a")} {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), tempPrefix) {
				t.Errorf("temporary file %s left in %s", e.Name(), d)
			}
		}
	}
}

func TestPagesMarkerNotRegular(t *testing.T) {
	in, out, _ := plantedSite(t)
	marker := filepath.Join(out, MarkerName)
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(marker, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(Options{Input: in, Output: out}); err == nil || !strings.Contains(err.Error(), "not a popmon pages marker") {
		t.Errorf("folder as marker: err = %v", err)
	}
	// A folder where the site writes a file is refused, not removed.
	in, out, _ = plantedSite(t)
	p := filepath.Join(out, "a", "badge.svg")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(p, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(Options{Input: in, Output: out}); err == nil || !strings.Contains(err.Error(), "is a folder where popmon pages writes a file") {
		t.Errorf("folder in the way: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(p, "keep")); err != nil {
		t.Errorf("folder in the way was changed: %v", err)
	}
}

func TestLinkErrorEscapes(t *testing.T) {
	err := &LinkError{Path: "site/a\x1b[2J", Target: "/tmp/\u202eevil"}
	want := `output: site/a\x1b[2J is a symbolic link (to /tmp/\u202eevil); popmon pages never reads, writes or removes through a link in its output folder: remove the link (rm site/a\x1b[2J) or choose another output folder`
	if got := err.Error(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
