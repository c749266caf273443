package tarsaver_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/drivertest"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/tarsaver"
)

var tarExts = []string{".tar", ".tar.gz", ".tar.bz2", ".tar.zst"}

// needTools fails (never skips) when a system tool the tests read archives
// with is missing.
func needTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found in PATH: install it (apt-get install -y tar gzip bzip2 zstd)", tool)
		}
	}
}

// parts lists an archive's parts (name.tar.gz, name-1.tar.gz, ...) in order.
func parts(t testing.TB, base, ext string) []string {
	stem := strings.TrimSuffix(base, ext)
	more, err := filepath.Glob(stem + "-*" + ext)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(more, func(i, j int) bool { return partNum(more[i], stem, ext) < partNum(more[j], stem, ext) })
	var out []string
	if _, err := os.Stat(base); err == nil {
		out = append(out, base)
	}
	return append(out, more...)
}

func partNum(p, stem, ext string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p, stem+"-"), ext))
	return n
}

// systemList runs the system tar's listing of an archive and fails unless
// it exits 0.
func systemList(t testing.TB, archive string) []string {
	t.Helper()
	out, err := exec.Command("tar", "-tf", archive).CombinedOutput()
	if err != nil {
		t.Fatalf("tar -tf %s: %v\n%s", archive, err, out)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines
}

// decompress reads an archive part through the system decompressor.
func decompress(t testing.TB, archive, ext string) []byte {
	t.Helper()
	tool := map[string]string{".tar.gz": "gzip", ".tar.bz2": "bzip2", ".tar.zst": "zstd"}[ext]
	if tool == "" {
		b, err := os.ReadFile(archive)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var stderr bytes.Buffer
	cmd := exec.Command(tool, "-dc", archive)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s -dc %s: %v: %s", tool, archive, err, stderr.String())
	}
	return out
}

// readEntries parses the decompressed parts with the standard library's
// tar reader (not the saver's code).
func readEntries(t testing.TB, base, ext string) []savertest.Stored {
	t.Helper()
	var out []savertest.Stored
	var lastName string
	for _, part := range parts(t, base, ext) {
		tr := tar.NewReader(bytes.NewReader(decompress(t, part, ext)))
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", part, err)
			}
			body, err := io.ReadAll(tr)
			if err != nil {
				t.Fatalf("%s: %s: %v", part, h.Name, err)
			}
			if of, ok := h.PAXRecords[tarsaver.PAXCaptureOf]; ok {
				// A copy follows the entry of the page it copies, beside it.
				kind := h.PAXRecords[tarsaver.PAXCaptureKind]
				if len(out) == 0 || out[len(out)-1].Key != of || h.Name != tarsaver.CaptureName(lastName, kind) {
					t.Fatalf("%s: capture %s of %q does not follow its page's entry (%s)", part, h.Name, of, lastName)
				}
				out[len(out)-1].Captures = append(out[len(out)-1].Captures,
					saver.Capture{Kind: kind, ContentType: h.PAXRecords[tarsaver.PAXContentType], Data: body})
				continue
			}
			lastName = h.Name
			status, _ := strconv.Atoi(h.PAXRecords[tarsaver.PAXStatus])
			fetched, _ := time.Parse(time.RFC3339Nano, h.PAXRecords[tarsaver.PAXFetched])
			out = append(out, savertest.Stored{Key: h.PAXRecords[tarsaver.PAXKey], URL: h.PAXRecords[tarsaver.PAXURL],
				Status: status, ContentType: h.PAXRecords[tarsaver.PAXContentType], FetchedAt: fetched, Body: body,
				Header: savertest.MetaHeader(func(name string) string { return h.PAXRecords[tarsaver.PAXHeaderPrefix+name] }),
				Labels: saver.SplitLabels(h.PAXRecords[tarsaver.PAXLabels])})
			out[len(out)-1].Visit, _ = strconv.Atoi(h.PAXRecords[tarsaver.PAXVisit])
		}
	}
	return out
}

func tarTarget(t *testing.T, ext string) *savertest.Target {
	needTools(t, "tar", "gzip", "bzip2", "zstd")
	base := filepath.Join(t.TempDir(), "out", "test-w1"+ext)
	s, err := tarsaver.New(tarsaver.Config{Path: filepath.Join(filepath.Dir(base), "{crawl}-{worker}"+ext), Crawl: "test", Worker: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	// Each Read parses the whole archive: cache it while the parts are unchanged.
	var cacheSig string
	var cache []savertest.Stored
	entries := func(t testing.TB) []savertest.Stored {
		sig := ""
		for _, p := range parts(t, base, ext) {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			sig += fmt.Sprintf("%s:%d:%d;", p, st.Size(), st.ModTime().UnixNano())
		}
		if sig != cacheSig {
			cache, cacheSig = readEntries(t, base, ext), sig
		}
		return cache
	}
	return &savertest.Target{
		Saver:   s,
		Appends: true,
		ReadAll: entries,
		Count: func(t testing.TB) int {
			n := 0
			for _, p := range parts(t, base, ext) {
				n += len(systemList(t, p))
			}
			pages := entries(t)
			m := len(pages)
			for _, p := range pages {
				m += len(p.Captures)
			}
			if m != n {
				t.Fatalf("system tar lists %d entries, Go's reader %d", n, m)
			}
			return len(pages)
		},
	}
}

func TestTarBadConfig(t *testing.T) {
	for _, c := range []struct {
		path, want string
	}{
		{"", "saver.path: empty"},
		{filepath.Join(t.TempDir(), "a.zip"), "no archive extension"},
		{filepath.Join(t.TempDir(), "{id}.tar"), "unknown placeholder {id}"},
		{"/proc/distscrape/x.tar", "tar saver"},
	} {
		_, err := tarsaver.New(tarsaver.Config{Path: c.path, Crawl: "c", Worker: "w"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q) = %v, want an error containing %q", c.path, err, c.want)
		}
	}
}

// TestTarRestartNewPart: a second saver on the same path (a restarted
// worker) writes name-1, leaving the first part as it was.
func TestTarRestartNewPart(t *testing.T) {
	needTools(t, "tar", "gzip")
	ctx := context.Background()
	dir := t.TempDir()
	base := filepath.Join(dir, "c-w.tar.gz")
	for run := 0; run < 3; run++ {
		s, err := tarsaver.New(tarsaver.Config{Path: filepath.Join(dir, "{crawl}-{worker}.tar.gz"), Crawl: "c", Worker: "w"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Save(ctx, savertest.NewPage(fmt.Sprintf("http://h/run%d", run), []byte("x"))); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ps := parts(t, base, ".tar.gz")
	want := []string{base, filepath.Join(dir, "c-w-1.tar.gz"), filepath.Join(dir, "c-w-2.tar.gz")}
	if fmt.Sprint(ps) != fmt.Sprint(want) {
		t.Fatalf("parts %v, want %v", ps, want)
	}
	for i, p := range ps {
		if got := systemList(t, p); len(got) != 1 || got[0] != fmt.Sprintf("h/run%d/index.html", i) {
			t.Errorf("%s lists %q", p, got)
		}
	}
}

// TestTarExtract: the system tar extracts the entries, with their metadata
// as extended attributes, even when a page's URL is a directory of another.
func TestTarExtract(t *testing.T) {
	needTools(t, "tar", "zstd")
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.tar.zst")
	s, err := tarsaver.New(tarsaver.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	p := savertest.NewPage("https://example.org/docs/", []byte("<h1>docs</h1>"))
	for _, q := range []*saver.Page{
		savertest.NewPage("https://example.org/a", []byte("a")),
		savertest.NewPage("https://example.org/a/b", []byte("b")),
		savertest.NewPage("https://example.org/docs", []byte("old docs")),
		p, // the last entry of a name wins
	} {
		if err := s.Save(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "x")
	os.Mkdir(out, 0o755)
	if b, err := exec.Command("tar", "--xattrs", "--xattrs-include=user.*", "-xf", path, "-C", out).CombinedOutput(); err != nil {
		t.Fatalf("tar -x: %v\n%s", err, b)
	}
	file := filepath.Join(out, "example.org", "docs", "index.html")
	body, err := os.ReadFile(file)
	if err != nil || string(body) != string(p.Body) {
		t.Fatalf("extracted %q, %v", body, err)
	}
	for file, want := range map[string]string{"example.org/a/index.html": "a", "example.org/a/b/index.html": "b"} {
		if b, err := os.ReadFile(filepath.Join(out, file)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", file, b, err, want)
		}
	}
	buf := make([]byte, 256)
	n, err := syscall.Getxattr(file, "user.distscrape.url", buf)
	if err != nil || string(buf[:n]) != p.URL {
		t.Fatalf("xattr user.distscrape.url = %q, %v; want %q", buf[:max(n, 0)], err, p.URL)
	}
}

const crashEnv = "DISTSCRAPE_TAR_CRASH_CHILD"

// TestTarCrash kills (SIGKILL) a child process that saved and flushed some
// pages, then saved more (one larger than the in-memory spool), and checks
// that the system tar lists exactly the flushed entries.
func TestTarCrash(t *testing.T) {
	if spec := os.Getenv(crashEnv); spec != "" {
		crashChild(spec)
		return
	}
	needTools(t, "tar", "gzip", "bzip2", "zstd")
	for _, ext := range tarExts {
		t.Run(strings.TrimPrefix(ext, "."), func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "crash"+ext)
			n := drivertest.KillChild(t, "TestTarCrash", crashEnv, path, 1)
			got := systemList(t, path)
			var want []string
			for i := 0; i < n; i++ {
				want = append(want, fmt.Sprintf("example.test/flushed/%d.html", i))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("after SIGKILL tar -tf lists %q, want exactly the %d flushed entries %q", got, n, want)
			}
			// The restarted worker writes a new part; both read fine.
			s, err := tarsaver.New(tarsaver.Config{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Save(ctx, savertest.NewPage("http://example.test/after", []byte("after"))); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
			ps := parts(t, path, ext)
			if len(ps) != 2 || len(systemList(t, ps[1])) != 1 {
				t.Fatalf("after restart: parts %v", ps)
			}
		})
	}
}

// crashChild saves, flushes, saves more, reports, and waits to be killed.
func crashChild(path string) {
	ctx := context.Background()
	die := func(err error) { fmt.Fprintln(os.Stderr, "crash child:", err); os.Exit(3) }
	s, err := tarsaver.New(tarsaver.Config{Path: path})
	if err != nil {
		die(err)
	}
	const flushed = 7
	for i := 0; i < flushed; i++ {
		if err := s.Save(ctx, savertest.NewPage(fmt.Sprintf("http://example.test/flushed/%d.html", i), bytes.Repeat([]byte{byte(i)}, 1000*i))); err != nil {
			die(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		die(err)
	}
	for i := 0; i < 5; i++ {
		body := bytes.Repeat([]byte("unflushed "), 100*i)
		if i == 4 {
			body = make([]byte, 9<<20) // spills the spool to its temporary file
		}
		if err := s.Save(ctx, savertest.NewPage(fmt.Sprintf("http://example.test/unflushed/%d", i), body)); err != nil {
			die(err)
		}
	}
	fmt.Printf("flushed %d\n", flushed)
	time.Sleep(time.Minute) // the parent kills us long before
	os.Exit(4)
}

// TestRecordsUnchanged: a tar archive keeps bodies and has no record of a
// 304, so the manager hands it none.
func TestRecordsUnchanged(t *testing.T) {
	s, err := tarsaver.New(tarsaver.Config{Path: filepath.Join(t.TempDir(), "a.tar")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if saver.RecordsUnchanged(s) {
		t.Errorf("RecordsUnchanged(%T) = true, want false", s)
	}
}

// TestTarExtractsEveryOrder: a page whose URL is a directory of another
// page's, in both orders, gives an archive that GNU tar and Python's
// tarfile extract, every body in its place.
func TestTarExtractsEveryOrder(t *testing.T) {
	needTools(t, "tar")
	pages := [][]string{
		{"http://h/fd/x.html", "http://h/fd/x.html/y/"},
		{"http://h/a", "http://h/a/b"},
		{"http://h/a/index.html", "http://h/a/index.html/b.css"},
		{"http://h/v1.2/", "http://h/v1.2/a.css"},
		{"http://h/q?x=1", "http://h/q/index.html"},
	}
	for _, order := range []string{"file first", "directory first"} {
		dir := t.TempDir()
		path := filepath.Join(dir, "a.tar")
		s, err := tarsaver.New(tarsaver.Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		bodies := map[string]string{}
		for _, pair := range pages {
			if order == "directory first" {
				pair = []string{pair[1], pair[0]}
			}
			for _, u := range pair {
				if err := s.Save(context.Background(), savertest.NewPage(u, []byte(u))); err != nil {
					t.Fatal(err)
				}
				bodies[s.Name(&saver.Page{Key: u})] = u
			}
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		extractors := map[string][]string{"tar": {"tar", "-xf", path, "-C"}}
		if _, err := exec.LookPath("python3"); err == nil {
			extractors["python3"] = []string{"python3", "-c", "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])", path}
		}
		for name, argv := range extractors {
			out := filepath.Join(dir, name)
			os.Mkdir(out, 0o755)
			if b, err := exec.Command(argv[0], append(argv[1:], out)...).CombinedOutput(); err != nil {
				t.Fatalf("%s, %s: %v\n%s", order, name, err, b)
			}
			for entry, want := range bodies {
				if got, err := os.ReadFile(filepath.Join(out, entry)); err != nil || string(got) != want {
					t.Errorf("%s, %s: %s = %q, %v; want %q", order, name, entry, got, err, want)
				}
			}
		}
	}
}
