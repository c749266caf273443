package jsonlsink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/jsonlsink"
	"github.com/distscrape/distscrape/record/recordtest"
)

func store(t *testing.T, dir string) *recordtest.Store {
	if dir == "" {
		dir = t.TempDir()
	}
	return &recordtest.Store{
		Open: func(t testing.TB, opt record.Options) (record.Sink, error) {
			return jsonlsink.New(context.Background(), jsonlsink.Config{Dir: dir}, opt)
		},
		Reader:   func(t testing.TB, crawl string) record.Reader { return jsonlsink.NewReader(dir, crawl) },
		Location: dir,
	}
}

func TestConformance(t *testing.T) { recordtest.Run(t, store) }

// TestConformanceRecordShape: the record shape (a line per record) keeps
// the same contract, a Set whole or not at all.
func TestConformanceRecordShape(t *testing.T) {
	recordtest.Run(t, func(t *testing.T, dir string) *recordtest.Store {
		st := store(t, dir)
		dir = st.Location
		st.Open = func(t testing.TB, opt record.Options) (record.Sink, error) {
			return jsonlsink.New(context.Background(), jsonlsink.Config{Dir: dir, Shape: jsonlsink.ShapeRecord}, opt)
		}
		return st
	})
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestTornTail: whatever a killed writer left at the end of a file (part
// of a line, a line without its '\n', a header cut short, an empty file),
// readers ignore it and keep every whole line, and a new sink writes to a
// new file rather than after the tear.
func TestTornTail(t *testing.T) {
	ctx := context.Background()
	a, b := recordtest.NewSet("k1", "product", 3, 1), recordtest.NewSet("k2", "article", 2, 1)
	tears := map[string]func(line []byte) []byte{
		"half a line":         func(l []byte) []byte { return l[:len(l)/2] },
		"line without its LF": func(l []byte) []byte { return l[:len(l)-1] },
		"one byte":            func(l []byte) []byte { return l[:1] },
		"garbage":             func([]byte) []byte { return []byte("\x00\x00\x00") },
	}
	for name, tear := range tears {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			st := store(t, dir)
			s, err := st.Open(t, recordtest.Options(0))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, a); err != nil {
				t.Fatal(err)
			}
			s.Close(ctx)
			// The torn line: b replacing a's key, cut by tear.
			tmp := t.TempDir()
			s2, _ := jsonlsink.New(ctx, jsonlsink.Config{Dir: tmp}, recordtest.Options(0))
			s2.Put(ctx, recordtest.NewSet("k1", "product", 1, 9))
			s2.Close(ctx)
			whole, _ := os.ReadFile(files(t, tmp)[0])
			last := whole[bytes.IndexByte(whole, '\n')+1:]
			f, _ := os.OpenFile(files(t, dir)[0], os.O_APPEND|os.O_WRONLY, 0)
			f.Write(tear(last))
			f.Close()
			// An empty file and a header cut short, as a writer killed
			// while making its file leaves them.
			os.WriteFile(filepath.Join(dir, "crawl-1.w9.000001.jsonl"), nil, 0o644)
			os.WriteFile(filepath.Join(dir, "crawl-1.w8.000001.jsonl"), []byte(`{"distscrape_rec`), 0o644)

			r := jsonlsink.NewReader(dir, recordtest.Crawl)
			sets, err := r.Sets(ctx)
			if err != nil || len(sets) != 1 || sets[0].Key != "k1" || len(sets[0].Records) != 3 {
				t.Fatalf("after a torn tail: %d sets, %v; want k1's 3 records", len(sets), err)
			}
			before := len(files(t, dir))
			s3, err := st.Open(t, recordtest.Options(0))
			if err != nil {
				t.Fatal(err)
			}
			if err := s3.Put(ctx, b); err != nil {
				t.Fatal(err)
			}
			if err := s3.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if n := len(files(t, dir)); n != before+1 {
				t.Fatalf("%d files after a new sink wrote, want %d (a new one)", n, before+1)
			}
			sets, err = r.Sets(ctx)
			if err != nil || len(sets) != 2 {
				t.Fatalf("after a new sink: %d sets, %v", len(sets), err)
			}
		})
	}
}

// TestCorruptMiddle: a bad line that is not the last is an error naming
// the file and line, not silently skipped.
func TestCorruptMiddle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := jsonlsink.New(ctx, jsonlsink.Config{Dir: dir}, recordtest.Options(0))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		s.Put(ctx, recordtest.NewSet("k", "article", 1, i))
	}
	s.Close(ctx)
	path := files(t, dir)[0]
	data, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines[2] = []byte("{not json}\n")
	os.WriteFile(path, bytes.Join(lines, nil), 0o644)
	_, err = jsonlsink.NewReader(dir, recordtest.Crawl).Sets(ctx)
	if err == nil || !strings.Contains(err.Error(), filepath.Base(path)+":3:") {
		t.Fatalf("a corrupt line 3: %v, want an error naming %s:3", err, filepath.Base(path))
	}
}

// TestRotation: a file past MaxFileBytes is followed by a new one, each
// with its header; the reader reads across them.
func TestRotation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := jsonlsink.New(ctx, jsonlsink.Config{Dir: dir, MaxFileBytes: 4096}, recordtest.Options(1))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		set := recordtest.NewSet("k"+string(rune('a'+i%13)), "product", 1+i%3, i)
		if err := s.Put(ctx, set); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s.Close(ctx)
	fs := files(t, dir)
	if len(fs) < 5 {
		t.Fatalf("%d files after 40 flushes of ~2 KiB each at 4 KiB a file", len(fs))
	}
	for _, f := range fs {
		data, _ := os.ReadFile(f)
		if !bytes.HasPrefix(data, []byte(`{"distscrape_records":1,`)) {
			t.Fatalf("%s does not start with a header: %.40q", f, data)
		}
		if st, _ := os.Stat(f); st.Size() > 4096+8192 {
			t.Fatalf("%s holds %d bytes", f, st.Size())
		}
	}
	sets, err := jsonlsink.NewReader(dir, recordtest.Crawl).Sets(ctx)
	if err != nil || len(sets) != 13 {
		t.Fatalf("%d sets across rotated files, %v; want 13", len(sets), err)
	}
	v, err := jsonlsink.NewReader(dir, recordtest.Crawl).Versions(ctx, "ka", "product")
	if err != nil || len(v) != 1 || v[0].Records[0].Visit != 26 {
		t.Fatalf("versions of ka across files: %d, %v", len(v), err)
	}
}

// TestNames: crawl and worker names that could meet in a file name (dots,
// slashes, the escape character) stay apart.
func TestNames(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pairs := [][2]string{{"a.b", "c"}, {"a", "b.c"}, {"a%2Eb", "c"}, {"a/b", "c"}, {"../x", "y"}, {"z", "b/../../c"}}
	for i, p := range pairs {
		opt := recordtest.Options(0)
		opt.Crawl, opt.Worker = p[0], p[1]
		s, err := jsonlsink.New(ctx, jsonlsink.Config{Dir: dir}, opt)
		if err != nil {
			t.Fatal(err)
		}
		set := recordtest.NewSet("k", "article", 1+i, i)
		for j := range set.Records {
			set.Records[j].Crawl = p[0]
		}
		if err := s.Put(ctx, set); err != nil {
			t.Fatal(err)
		}
		s.Close(ctx)
	}
	if n := len(files(t, dir)); n != len(pairs) {
		t.Fatalf("%d files for %d crawl and worker pairs", n, len(pairs))
	}
	for i, p := range pairs {
		sets, err := jsonlsink.NewReader(dir, p[0]).Sets(ctx)
		if err != nil || len(sets) != 1 || len(sets[0].Records) != 1+i || sets[0].Records[0].Crawl != p[0] {
			t.Fatalf("crawl %q: %v, %v", p[0], sets, err)
		}
	}
}

// TestRecordShapeLines: in the record shape each line after the header
// is one record, its fields beside its metadata, as a Scrapy feed's; a
// Set whose last lines a killed writer did not write is ignored whole.
func TestRecordShapeLines(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := jsonlsink.New(ctx, jsonlsink.Config{Dir: dir, Shape: jsonlsink.ShapeRecord}, recordtest.Options(0))
	if err != nil {
		t.Fatal(err)
	}
	a, a2 := recordtest.NewSet("k", "article", 3, 1), recordtest.NewSet("k", "article", 3, 2)
	for _, set := range []record.Set{a, a2} {
		if err := s.Put(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	path := files(t, dir)[0]
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines = lines[:len(lines)-1]
	if len(lines) != 7 {
		t.Fatalf("%d lines, want a header and 6 records", len(lines))
	}
	for i, l := range lines[1:] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		w := []record.Set{a, a2}[i/3].Records[i%3]
		if m["headline"] != w.Fields["headline"] || m["words"] != float64(w.Fields["words"].(int64)) || m["key"] != "k" || m["idx"] != float64(i%3) || m["set_size"] != 3.0 {
			t.Fatalf("line %d: %v, want the record %v", i+2, m, w)
		}
	}
	// Cut the last record of a2: a2 is torn, a is the current Set.
	if err := os.WriteFile(path, []byte(strings.Join(lines[:6], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := jsonlsink.NewReader(dir, recordtest.Crawl).Sets(ctx)
	if err != nil || len(got) != 1 || len(got[0].Records) != 3 || got[0].Records[0].Visit != 1 {
		t.Fatalf("after a torn Set: %v, %v; want the earlier Set whole", got, err)
	}
}

// BenchmarkSinkRevisit: what a revisited page costs the sink, the change
// log's digest index included (recordtest.BenchRevisit).
func BenchmarkSinkRevisit(b *testing.B) {
	s, err := jsonlsink.New(context.Background(), jsonlsink.Config{Dir: b.TempDir()},
		record.Options{Crawl: "bench", Worker: "w1", Schemas: recordtest.BenchSchemas})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	recordtest.BenchRevisit(b, s)
}

// TestDiscard: the queued lines of the keys given back are dropped, in
// both shapes, the others written; what was already written stays.
func TestDiscard(t *testing.T) {
	ctx := context.Background()
	for _, shape := range []string{jsonlsink.ShapePage, jsonlsink.ShapeRecord} {
		t.Run(shape, func(t *testing.T) {
			dir := t.TempDir()
			s, err := jsonlsink.New(ctx, jsonlsink.Config{Dir: dir, Shape: shape}, recordtest.Options(0))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, recordtest.NewSet("k0", "product", 2, 1)); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"k1", "k2", "k3", "k2"} {
				if err := s.Put(ctx, recordtest.NewSet(k, "product", 2, 1)); err != nil {
					t.Fatal(err)
				}
			}
			s.Discard([]string{"k2", "k0"})
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
			sets, err := jsonlsink.NewReader(dir, recordtest.Crawl).Sets(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, st := range sets {
				keys = append(keys, st.Key)
			}
			if strings.Join(keys, ",") != "k0,k1,k3" {
				t.Errorf("keys stored %v, want k0 (written before), k1, k3", keys)
			}
		})
	}
}
