package manager_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/extract"
	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/pagetree"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
)

// pageExtractor is a small real extractor: rule "page" takes the number
// out of the page's <h1>, one record per page. Pages in invalid fail
// validation (as a captcha page would), pages in badBody are a body it
// cannot read (final).
type pageExtractor struct {
	invalid     map[string]bool
	invalidOnce map[string]bool // invalid on the first attempt only (a captcha gone on retry)
	badBody     map[string]bool
	calls       sync.Map // key -> *atomic.Int64
}

var h1 = regexp.MustCompile(`<h1>page (\d+)</h1>`)

type invalidErr struct{ rule, msg string }

func (e invalidErr) Error() string       { return e.msg }
func (e invalidErr) InvalidRule() string { return e.rule }

func (x *pageExtractor) Extract(_ context.Context, p *saver.Page) ([]record.Set, error) {
	v, _ := x.calls.LoadOrStore(p.Key, new(atomic.Int64))
	call := v.(*atomic.Int64).Add(1)
	if x.invalidOnce[p.Key] && call == 1 {
		return nil, invalidErr{"page", "field n: required, not found"}
	}
	if x.badBody[p.Key] {
		return nil, fetch.Final("extract body", errors.New("body is not HTML"))
	}
	m := h1.FindSubmatch(p.Body)
	if m == nil || x.invalid[p.Key] {
		return nil, invalidErr{"page", "field n: required, not found"}
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return []record.Set{{Key: p.Key, Rule: "page", Records: []record.Record{{Crawl: "t", Key: p.Key, URL: p.URL, Rule: "page",
		FetchedAt: p.FetchedAt, Status: record.Valid, Fields: map[string]any{"n": n}}}}}, nil
}

func (x *pageExtractor) extracted(key string) int64 {
	v, ok := x.calls.Load(key)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

// fileSink is a test sink that keeps Sets as JSON lines in a file, durable
// on Flush (fsync); failFlushes makes the next Flush calls fail and lose
// what was buffered, as a sink whose database went away does.
type fileSink struct {
	path        string
	mu          sync.Mutex
	buf         []record.Set
	puts        map[string]int
	failFlushes int
	failPut     map[string]bool
	lostPuts    []string // keys buffered when a flush failed
}

func newFileSink(t *testing.T) *fileSink {
	return &fileSink{path: filepath.Join(t.TempDir(), "records.jsonl"), puts: map[string]int{}, failPut: map[string]bool{}}
}

func (s *fileSink) Put(_ context.Context, set record.Set) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failPut[set.Key] {
		return fmt.Errorf("%w: field n: injected bad value", record.ErrValue)
	}
	s.puts[set.Key]++
	s.buf = append(s.buf, set)
	return nil
}

func (s *fileSink) Flush(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failFlushes > 0 {
		s.failFlushes--
		for _, set := range s.buf {
			s.lostPuts = append(s.lostPuts, set.Key)
		}
		s.buf = nil
		return errors.New("injected flush failure (database down)")
	}
	f, err := os.OpenFile(s.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, set := range s.buf {
		if err := enc.Encode(set); err != nil {
			return err
		}
	}
	s.buf = nil
	return f.Sync()
}

func (s *fileSink) Close(ctx context.Context) error { return s.Flush(ctx) }

// durable reads the file back: the last Set of each (key, rule) wins.
func (s *fileSink) durable(t *testing.T) map[string]record.Set {
	t.Helper()
	out := map[string]record.Set{}
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var set record.Set
		if err := json.Unmarshal(sc.Bytes(), &set); err != nil {
			t.Fatal(err)
		}
		out[set.Key+" "+set.Rule] = set
	}
	return out
}

// countingObserver is a RecordObserver that adds up what it hears.
type countingObserver struct {
	mu               sync.Mutex
	written, invalid map[string]int
}

func (o *countingObserver) ObserveFetch(manager.Observation) {}
func (o *countingObserver) ObserveRecords(rule string, written, invalid int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.written[rule] += written
	o.invalid[rule] += invalid
}

// TestRecordsOfEveryPage: each page's records are in the sink once, with
// the values extracted, and counted per rule in the summary and by the
// observer.
func TestRecordsOfEveryPage(t *testing.T) {
	const pages = 60
	b := setup(t, pages, tracker.Options{})
	sink := newFileSink(t)
	obs := &countingObserver{written: map[string]int{}, invalid: map[string]int{}}
	sum := run(t, b.manager(t, nil, nil, manager.Config{Concurrency: 8, Batch: 4,
		Extractor: &pageExtractor{}, Records: sink, Observer: obs}), time.Minute)
	got := sink.durable(t)
	if len(got) != pages {
		t.Fatalf("%d Sets durable, want %d", len(got), pages)
	}
	for i := range pages {
		set, ok := got[b.site.url(i)+" page"]
		if !ok || len(set.Records) != 1 || set.Records[0].Fields["n"] != float64(i) { // JSON numbers read back as float64
			t.Errorf("page %d: records %+v", i, set)
		}
	}
	if c := sum.Records["page"]; c.Written != pages || c.Invalid != 0 {
		t.Errorf("summary counts %+v, want %d written", sum.Records, pages)
	}
	if obs.written["page"] != pages {
		t.Errorf("observer heard %v written", obs.written)
	}
}

// TestRecordsFlushFailureIsNeverCompleted: the sink's Flush fails once (the
// database went away); no item whose records it lost is completed: each is
// fetched again and its records end up durable.
func TestRecordsFlushFailureIsNeverCompleted(t *testing.T) {
	const pages = 40
	b := setup(t, pages, tracker.Options{MaxAttempts: 5})
	sink := newFileSink(t)
	sink.failFlushes = 1
	x := &pageExtractor{}
	sum := run(t, b.manager(t, nil, nil, manager.Config{Concurrency: 4, Batch: 2, Extractor: x, Records: sink}), time.Minute)
	if len(sink.lostPuts) == 0 {
		t.Fatal("the injected flush failure never happened")
	}
	for _, k := range sink.lostPuts {
		if x.extracted(k) < 2 {
			t.Errorf("%s extracted %d times; an item whose records were lost must be fetched again, not completed", k, x.extracted(k))
		}
	}
	if got := sink.durable(t); len(got) != pages {
		t.Fatalf("%d Sets durable, want %d", len(got), pages)
	}
	if st := stats(t, b.tr); st.Done != pages || st.Failed != 0 {
		t.Fatalf("stats %+v, want %d done", st, pages)
	}
	if c := sum.Records["page"]; c.Written != pages {
		t.Errorf("summary %+v: want %d written (records lost in a failed flush are not)", sum.Records, pages)
	}
}

// TestRecordFailuresAreDeadLetters: every way records fail a page makes it
// fail with the reason, and nothing of it is saved or completed: records
// failing validation (retried, then a dead letter), a body the extractor
// cannot read (final at once), a value the sink refuses.
func TestRecordFailuresAreDeadLetters(t *testing.T) {
	const pages = 20
	b := setup(t, pages, tracker.Options{MaxAttempts: 2})
	x := &pageExtractor{invalid: map[string]bool{b.site.url(3): true, b.site.url(6): true}, badBody: map[string]bool{b.site.url(4): true},
		invalidOnce: map[string]bool{b.site.url(7): true}}
	sink := newFileSink(t)
	sink.failPut[b.site.url(5)] = true
	fs := newFlaky(b)
	obs := &countingObserver{written: map[string]int{}, invalid: map[string]int{}}
	sum := run(t, b.manager(t, nil, fs, manager.Config{Concurrency: 4, Batch: 4, Extractor: x, Records: sink, MaxAttempts: 2, Observer: obs}), time.Minute)
	failed, err := b.tr.Failed(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, f := range failed {
		reasons[f.Key] = f.Reason
	}
	for i, want := range map[int]string{3: "extract: field n: required, not found", 6: "extract: field n: required, not found",
		4: "body is not HTML", 5: "records: put page: record: value"} {
		if r, ok := reasons[b.site.url(i)]; !ok || !strings.Contains(r, want) {
			t.Errorf("page %d: dead letter reason %q (present %v), want it to mention %q", i, r, ok, want)
		}
	}
	if n := b.site.fetches(3); n != 2 {
		t.Errorf("the invalid page was fetched %d times, want max_attempts = 2", n)
	}
	if n := b.site.fetches(4); n != 1 {
		t.Errorf("the unreadable body was fetched %d times, want 1 (final)", n)
	}
	for _, i := range []int{3, 4} {
		if n := fs.saves[b.site.url(i)]; n != 0 {
			t.Errorf("page %d: saved %d times; a page whose records fail is not kept", i, n)
		}
	}
	got := sink.durable(t)
	for _, i := range []int{3, 4, 5, 6} {
		if _, ok := got[b.site.url(i)+" page"]; ok {
			t.Errorf("page %d has records in the sink", i)
		}
	}
	if st := stats(t, b.tr); st.Failed != 4 || st.Done != pages-4 || len(got) != pages-4 {
		t.Fatalf("stats %+v, %d Sets; want 4 failed, the rest done with records", st, len(got))
	}
	if n := x.extracted(b.site.url(7)); n != 2 {
		t.Errorf("page 7, invalid once, was extracted %d times, want 2", n)
	}
	// Pages 3 and 6 are dead letters for an invalid record: one each, not
	// one per attempt; page 7 passed on its retry and counts none.
	if c := sum.Records["page"]; c.Invalid != 2 || c.Written != pages-4 {
		t.Errorf("summary %+v: want 2 invalid (pages 3 and 6, once each), %d written", sum.Records, pages-4)
	}
	if obs.invalid["page"] != 2 {
		t.Errorf("the observer heard of %d invalid records, want 2", obs.invalid["page"])
	}
}

// TestUnchangedPageKeepsItsRecords: a revisit answered 304 is not
// extracted: the sink is not asked to replace the records it has.
func TestUnchangedPageKeepsItsRecords(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<h1>page 7</h1>")
	}))
	t.Cleanup(srv.Close)
	same, fresh := srv.URL+"/same", srv.URL+"/fresh"
	mt, err := memtracker.New(memtracker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tr := &revisitTracker{Tracker: mt, want: 2, allDone: make(chan struct{}),
		lease: map[string]tracker.Lease{same: {Validators: tracker.Validators{ETag: `"v1"`}, Visits: 1}}}
	if _, err := mt.Add(context.Background(), []tracker.Item{{Key: same}, {Key: fresh}}); err != nil {
		t.Fatal(err)
	}
	sv, err := filesaver.New(filesaver.Config{Dir: t.TempDir(), Layout: "flat", Name: "{sha256}", Crawl: "t", Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scraper.NewLink(scraper.LinkConfig{Seeds: []string{srv.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	fe, err := fetch.New(fetch.Config{Robots: false, InScope: sc.InScope})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fe.Close)
	x, sink := &pageExtractor{}, newFileSink(t)
	m, err := manager.New(tr, sc, sv, fe, manager.Config{Worker: "w1", ExitWhenDone: true, Extractor: x, Records: sink})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := m.Run(context.Background())
	if err != nil || tr.completed() != 2 || sum.Unchanged != 1 {
		t.Fatalf("Run: %v, %d completions, summary %+v; want 2 completions, 1 unchanged", err, tr.completed(), sum)
	}
	if x.extracted(same) != 0 || sink.puts[same] != 0 {
		t.Errorf("the unchanged page was extracted %d times, put %d times; want neither", x.extracted(same), sink.puts[same])
	}
	if x.extracted(fresh) != 1 || len(sink.durable(t)) != 1 {
		t.Errorf("the changed page: extracted %d times, %d Sets durable; want 1 and 1", x.extracted(fresh), len(sink.durable(t)))
	}
}

// TestExtractorNeedsSink: an Extractor without a sink (or the reverse) is
// refused at New, not discovered at the first page.
func TestExtractorNeedsSink(t *testing.T) {
	b := setup(t, 1, tracker.Options{})
	for _, cfg := range []manager.Config{{Worker: "w", Extractor: &pageExtractor{}}, {Worker: "w", Records: newFileSink(t)}} {
		if _, err := manager.New(b.tr, b.sc, b.sv, b.fe, cfg); err == nil {
			t.Errorf("New accepted %+v", cfg)
		}
	}
}

// treeScraper is the link scraper, noting for each page whether the
// context it was called with offers a parse of the page's body.
type treeScraper struct {
	scraper.Scraper
	mu      sync.Mutex
	offered map[string]bool
}

func (s *treeScraper) Scrape(ctx context.Context, item tracker.Item, resp *fetch.Response) ([]tracker.Item, error) {
	_, err, ok := pagetree.Get(ctx, resp.Body)
	s.mu.Lock()
	s.offered[item.Key] = ok && err == nil
	s.mu.Unlock()
	return s.Scraper.Scrape(ctx, item, resp)
}

// TestScraperReadsTheExtractorsParse: with an extractor that offers its
// parse (extract.Extractor), the scraper is called with the page's tree
// on every page a rule parses, and on no other; the records are right.
func TestScraperReadsTheExtractorsParse(t *testing.T) {
	const pages = 30
	b := setup(t, pages, tracker.Options{})
	ts := &treeScraper{Scraper: b.sc, offered: map[string]bool{}}
	// Pages 1, 10-19 and 100-... are matched: the others are not parsed.
	ex, err := extract.Compile([]extract.Rule{{Name: "page", Match: `/1[0-9]*$`, Fields: []extract.Field{
		{Name: "n", CSS: "h1", Required: true}}}}, extract.Options{Crawl: "t"})
	if err != nil {
		t.Fatal(err)
	}
	sink := newFileSink(t)
	m, err := manager.New(b.tr, ts, b.sv, b.fe, manager.Config{Worker: "w1", ExitWhenDone: true, Concurrency: 4,
		Extractor: ex, Records: sink, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	run(t, m, time.Minute)
	match := regexp.MustCompile(`/1[0-9]*$`)
	for i := range pages {
		u := b.site.url(i)
		if ts.offered[u] != match.MatchString(u) {
			t.Errorf("%s: scraped with a parse offered: %v", u, ts.offered[u])
		}
	}
	got := sink.durable(t)
	if set := got[b.site.url(12)+" page"]; len(set.Records) != 1 || set.Records[0].Fields["n"] != "page 12" {
		t.Errorf("records of page 12: %+v", set)
	}
	if len(got) != 11 {
		t.Errorf("%d Sets, want 11", len(got))
	}
}
