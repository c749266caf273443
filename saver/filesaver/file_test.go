package filesaver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/savertest"
)

// fileTarget reads a file saver's output as a user would: the manifest
// (plain JSON lines) says which file holds which key.
func fileTarget(t *testing.T, layout string) *savertest.Target {
	dir := t.TempDir()
	s, err := filesaver.New(filesaver.Config{Dir: dir, Layout: layout, Crawl: "test", Worker: "w1", KeepVersions: 3})
	if err != nil {
		t.Fatal(err)
	}
	return &savertest.Target{
		Saver:        s,
		KeepVersions: 3,
		Versions:     func(t testing.TB, key string) []savertest.Stored { return fileVersions(t, dir, key) },
		// The last manifest line of a key (but for a 304's) says where its one file is.
		ReadAll: func(t testing.TB) []savertest.Stored {
			last := map[string]manifestLine{}
			var order []string
			for _, l := range readManifest(t, dir) {
				if l.Unchanged || l.Kind != "" {
					continue // no file: a 304, a redirect, a failure
				}
				if _, ok := last[l.Key]; !ok {
					order = append(order, l.Key)
				}
				last[l.Key] = l
			}
			var out []savertest.Stored
			for _, k := range order {
				l := last[k]
				body, err := readMirrored(dir, l.Path)
				if err != nil {
					t.Fatalf("read %s: %v", l.Path, err)
				}
				out = append(out, l.stored(body))
			}
			return out
		},
		Count: func(t testing.TB) int { return len(pageFiles(t, dir)) },
	}
}

type manifestLine struct {
	Key         string            `json:"key"`
	KeyBytes    []byte            `json:"key_bytes"`
	Path        string            `json:"path"`
	URL         string            `json:"url"`
	Status      int               `json:"status"`
	ContentType string            `json:"content_type"`
	Fetched     time.Time         `json:"fetched"`
	Size        int               `json:"size"`
	Headers     map[string]string `json:"headers"`
	Labels      []string          `json:"labels"`
	Visit       int               `json:"visit"`
	Unchanged   bool              `json:"unchanged"`
	Kind        string            `json:"kind"`
	Location    string            `json:"location"`
	Previous    string            `json:"previous"`
	Pruned      []string          `json:"pruned"`
}

func (l manifestLine) stored(body []byte) savertest.Stored {
	return savertest.Stored{Key: l.Key, URL: l.URL, Status: l.Status, ContentType: l.ContentType, FetchedAt: l.Fetched,
		Body: body, Header: savertest.MetaHeader(func(name string) string { return l.Headers[name] }), Labels: l.Labels, Visit: l.Visit}
}

// fileVersions reads the earlier versions of key as the manifest tells:
// each save of it that kept one names it in "previous", and the version
// holds the page of the key's save before (its metadata); those pruned
// since are gone from the disk, and the manifest says so in "pruned".
func fileVersions(t testing.TB, dir, key string) []savertest.Stored {
	t.Helper()
	var saves []manifestLine
	kept := map[string]manifestLine{} // version path -> the save whose page it holds
	var order []string
	for _, l := range readManifest(t, dir) {
		if l.Key != key || l.Unchanged {
			continue
		}
		if l.Previous != "" && len(saves) > 0 {
			if _, ok := kept[l.Previous]; !ok {
				order = append(order, l.Previous)
			}
			kept[l.Previous] = saves[len(saves)-1]
		}
		for _, p := range l.Pruned {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
				t.Fatalf("version %s was pruned, says the manifest, but is there", p)
			}
			delete(kept, p)
		}
		saves = append(saves, l)
	}
	var out []savertest.Stored
	for _, p := range order {
		if l, ok := kept[p]; ok {
			body, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			if err != nil {
				t.Fatalf("version %s: %v", p, err)
			}
			out = append(out, l.stored(body))
		}
	}
	if len(saves) > 0 { // the disk holds what the manifest says, no more
		vdir := filepath.Join(dir, filesaver.MetaDir, filesaver.VersionsDir, filepath.FromSlash(saves[len(saves)-1].Path))
		names, _ := filepath.Glob(filepath.Join(vdir, filesaver.VersionPrefix+"*"))
		if len(names) != len(out) {
			t.Fatalf("%s holds %d versions, the manifest says %d", vdir, len(names), len(out))
		}
	}
	return out
}

func readManifest(t testing.TB, dir string) []manifestLine {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, filesaver.MetaDir, "manifest-*.jsonl"))
	var out []manifestLine
	for _, name := range names {
		fh, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if len(strings.TrimSpace(sc.Text())) == 0 {
				continue
			}
			var l manifestLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("manifest %s: bad line %q: %v", name, sc.Text(), err)
			}
			if l.KeyBytes != nil {
				l.Key = string(l.KeyBytes)
			}
			out = append(out, l)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// readMirrored reads rel, or rel/index.html once rel became a directory.
func readMirrored(dir, rel string) ([]byte, error) {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		p = filepath.Join(p, "index.html")
	}
	return os.ReadFile(p)
}

// pageFiles lists the regular files under dir outside the saver's MetaDir.
func pageFiles(t testing.TB, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == filesaver.MetaDir && filepath.Dir(p) == dir {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		} else if !d.IsDir() {
			t.Errorf("unexpected non-regular file %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestFileMirrorPaths(t *testing.T) {
	s, err := filesaver.New(filesaver.Config{Dir: t.TempDir(), Crawl: "c", Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	for _, c := range []struct{ key, url, want string }{
		{"http://example.org/", "", "example.org/index.html"},
		{"http://example.org", "", "example.org/index.html"},
		{"https://Example.ORG/a/b/", "", "example.org/a/b/index.html"},
		{"https://example.org/a/b.html", "", "example.org/a/b.html"},
		{"https://example.org/a/b.html?x=1&y=../z", "", "example.org/a/b.html?x=1&y=..%2Fz"},
		{"https://example.org/?page=2", "", "example.org/index.html?page=2"},
		{"https://example.org/a/../../etc/passwd", "", "example.org/a/%2E%2E/%2E%2E/etc/passwd"},
		{"https://example.org/%2e%2e/x", "", "example.org/%2e%2e/x"}, // not normalised: kept as written, never ".."
		{"https://example.org/a%2Fb", "", "example.org/a%2Fb"},
		{"https://example.org/a\\b", "", "example.org/a%5Cb"},
		{"https://example.org:8080/p#frag", "", "example.org:8080/p"},
		{"https://example.org/%C3%A9t%C3%A9", "", "example.org/été"},
		{"https://example.org/100%25", "", "example.org/100%25"},
		{"4242", "https://cdn.example.org/item/4242", "cdn.example.org/item/4242"},
		{"4242", "", "_/4242"},
		{"../x", "", "_/..%2Fx"},
	} {
		if got := s.Path(&saver.Page{Key: c.key, URL: c.url}); got != c.want {
			t.Errorf("Path(key %q, url %q) = %q, want %q", c.key, c.url, got, c.want)
		}
	}
}

func TestFileFlatTemplates(t *testing.T) {
	p := &saver.Page{Key: "https://example.org/a/b?q=1", URL: "https://example.org/a/b?q=1"}
	for _, c := range []struct{ name, want string }{
		{"{id}", "https:%2F%2Fexample.org%2Fa%2Fb%3Fq=1"},
		{"{crawl}/{worker}/{sha256}.html", "c/w-1/" + sha256Hex(p.Key) + ".html"},
		{"/{host}//{path}", "example.org/a/b?q=1"},
		{"../{host}/./x", "%2E%2E/example.org/%2E/x"},
		{"{{literal}}-{id}", "{literal}-https:%2F%2Fexample.org%2Fa%2Fb%3Fq=1"},
	} {
		s, err := filesaver.New(filesaver.Config{Dir: t.TempDir(), Layout: "flat", Name: c.name, Crawl: "c", Worker: "w-1"})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := s.Path(p); got != c.want {
			t.Errorf("template %q: Path = %q, want %q", c.name, got, c.want)
		}
		s.Close(context.Background())
	}
}

func TestFileBadConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  filesaver.Config
		want string
	}{
		{filesaver.Config{}, "saver.dir"},
		{filesaver.Config{Dir: t.TempDir(), Layout: "tree"}, "saver.layout"},
		{filesaver.Config{Dir: t.TempDir(), Layout: "flat", Name: "{nope}"}, "unknown placeholder {nope}"},
		{filesaver.Config{Dir: t.TempDir(), Layout: "flat", Name: "{id"}, "unclosed {"},
	} {
		_, err := filesaver.New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
}

// TestFileDirConflict: a URL saved as a file, then a URL under it, as wget
// does: the file becomes dir/index.html, and both stay readable.
func TestFileDirConflict(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := filesaver.New(filesaver.Config{Dir: dir, Crawl: "c", Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct{ key, body, file string }{
		{"http://h/a", "A", "h/a/index.html"},
		{"http://h/a/b", "B", "h/a/b"},
		{"http://h/a", "A2", "h/a/index.html"}, // re-save lands on the moved file
		{"http://h/x/y/", "Y", "h/x/y/index.html"},
	}
	for _, st := range steps {
		if err := s.Save(ctx, savertest.NewPage(st.key, []byte(st.body))); err != nil {
			t.Fatalf("Save %s: %v", st.key, err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ file, body string }{{"h/a/index.html", "A2"}, {"h/a/b", "B"}, {"h/x/y/index.html", "Y"}} {
		b, err := os.ReadFile(filepath.Join(dir, want.file))
		if err != nil || string(b) != want.body {
			t.Errorf("%s = %q, %v; want %q", want.file, b, err, want.body)
		}
	}
	if n := len(pageFiles(t, dir)); n != 3 {
		t.Errorf("%d files, want 3", n)
	}
}

// TestFileStaysInside saves every hostile key with both layouts under a
// directory inside a sandbox and checks that nothing appeared outside it.
func TestFileStaysInside(t *testing.T) {
	ctx := context.Background()
	for _, layout := range []string{"mirror", "flat"} {
		sandbox := t.TempDir()
		dir := filepath.Join(sandbox, "out")
		s, err := filesaver.New(filesaver.Config{Dir: dir, Layout: layout, Crawl: "../c", Worker: "w"})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range savertest.HostileKeys {
			if err := s.Save(ctx, savertest.NewPage(k, []byte(k))); err != nil {
				t.Fatalf("%s: Save(%q): %v", layout, k, err)
			}
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(sandbox)
		if err != nil || len(entries) != 1 || entries[0].Name() != "out" {
			t.Fatalf("%s: sandbox holds %v (%v), want only out/", layout, entries, err)
		}
	}
}

func TestFileTempCleanedAtStart(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, filesaver.MetaDir, "tmp", "w", "17")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("half a page"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := filesaver.New(filesaver.Config{Dir: dir, Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stale temporary file still there: %v", err)
	}
}

// TestFileDirConflictConcurrent: a page and pages under it saved at once
// from many goroutines: every page ends up readable, none lost.
func TestFileDirConflictConcurrent(t *testing.T) {
	ctx := context.Background()
	for round := 0; round < 5; round++ {
		dir := t.TempDir()
		s, err := filesaver.New(filesaver.Config{Dir: dir, Crawl: "c", Worker: "w"})
		if err != nil {
			t.Fatal(err)
		}
		const n = 16
		errs := make(chan error, 2*n)
		var wg sync.WaitGroup
		for g := 0; g < n; g++ {
			wg.Add(2)
			go func() {
				defer wg.Done()
				errs <- s.Save(ctx, savertest.NewPage("http://h/a", []byte("A")))
			}()
			go func() {
				defer wg.Done()
				errs <- s.Save(ctx, savertest.NewPage(fmt.Sprintf("http://h/a/b%d", g), []byte(fmt.Sprint(g))))
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "h", "a", "index.html")); err != nil || string(b) != "A" {
			t.Fatalf("round %d: h/a/index.html = %q, %v", round, b, err)
		}
		for g := 0; g < n; g++ {
			if b, err := os.ReadFile(filepath.Join(dir, "h", "a", fmt.Sprintf("b%d", g))); err != nil || string(b) != fmt.Sprint(g) {
				t.Fatalf("round %d: h/a/b%d = %q, %v", round, g, b, err)
			}
		}
		if files := pageFiles(t, dir); len(files) != n+1 {
			t.Fatalf("round %d: %d files, want %d: %v", round, len(files), n+1, files)
		}
	}
}

// TestFileSharedNameWarns: where the mirror layout gives URLs one file (a
// directory URL and its index.html; h/a once h/a is a directory), the
// manifest says so and a page that replaces the file is logged: no body is
// replaced silently. A page re-saved to a name of its own is not.
func TestFileSharedNameWarns(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var logged strings.Builder
	s, err := filesaver.New(filesaver.Config{Dir: dir, Crawl: "c", Worker: "w",
		Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		key     string
		aliases []string
		warns   bool
	}{
		{"http://h/d/", []string{"http://h/d/index.html"}, false},
		{"http://h/d/index.html", []string{"http://h/d/"}, true},
		{"http://h/x.html", nil, false},
		{"http://h/x.html", nil, false}, // the same page again: no other URL lost
		{"http://h/a", nil, false},
		{"http://h/a/b", nil, false}, // h/a moves to h/a/index.html
		{"http://h/a/", []string{"http://h/a/index.html"}, true},
		{"http://h/a", []string{"http://h/a/", "http://h/a/index.html"}, true},
		{"http://h/?q", []string{"http://h/index.html?q"}, false},
	}
	for _, st := range steps {
		before := logged.Len()
		if err := s.Save(ctx, savertest.NewPage(st.key, []byte(st.key))); err != nil {
			t.Fatal(err)
		}
		if warned := logged.Len() > before; warned != st.warns {
			t.Errorf("save %s: warned %v, want %v: %s", st.key, warned, st.warns, logged.String()[before:])
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, filesaver.MetaDir, "manifest-c-w.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(manifest)), "\n")
	if len(lines) != len(steps) {
		t.Fatalf("%d manifest lines, want %d", len(lines), len(steps))
	}
	for i, st := range steps {
		var rec struct {
			Key     string
			Aliases []string
		}
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Key != st.key || !slices.Equal(rec.Aliases, st.aliases) {
			t.Errorf("manifest line %d: %s aliases %v, want %s %v", i, rec.Key, rec.Aliases, st.key, st.aliases)
		}
	}
	if !strings.Contains(logged.String(), "aliases") {
		t.Errorf("the warning does not name the URLs that share the file: %s", logged.String())
	}
}
