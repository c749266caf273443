package redissink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/recordtest"
	"github.com/distscrape/distscrape/record/redissink"
)

// bundle is a private server, a sink config on it and a raw client.
type bundle struct {
	srv *redistest.Server
	cfg redissink.Config
	raw *redis.Client
}

func setup(t *testing.T, opts redistest.Options) *bundle {
	srv := redistest.Start(t, opts)
	return &bundle{srv: srv, cfg: redissink.Config{URL: srv.URL(0), Key: testKey}, raw: srv.Client(t)}
}

func (b *bundle) open(t *testing.T, keep int) *redissink.Sink {
	t.Helper()
	s, err := redissink.New(context.Background(), b.cfg, recordtest.Options(keep))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func (b *bundle) reader(t *testing.T) *redissink.Reader {
	t.Helper()
	r, err := redissink.NewReader(context.Background(), b.cfg, recordtest.Crawl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func (b *bundle) key(kind, rule, item string) string {
	switch kind {
	case "schema":
		return redissink.SchemaKey(testKey, recordtest.Crawl)
	case "cur":
		return redissink.CurrentKey(testKey, recordtest.Crawl, rule)
	case "count":
		return redissink.CountsKey(testKey, recordtest.Crawl, rule)
	}
	return redissink.VersionsKey(testKey, recordtest.Crawl, rule, item)
}

func putFlush(t *testing.T, s record.Sink, sets ...record.Set) {
	t.Helper()
	ctx := context.Background()
	for _, set := range sets {
		if err := s.Put(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// expectCounts checks that the reader's counts are those of counting the
// Sets it reads, and that want rules have records.
func expectCounts(t *testing.T, r *redissink.Reader, want ...string) map[string]record.RuleCounts {
	t.Helper()
	ctx := context.Background()
	got, err := r.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := r.Sets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if read := record.CountSets(sets); !reflect.DeepEqual(got, read) {
		t.Fatalf("Counts %v, counting Sets %v", got, read)
	}
	for _, rule := range want {
		if got[rule].Records == 0 {
			t.Fatalf("Counts %v: no %s records", got, rule)
		}
	}
	return got
}

// TestLayout: the raw state a Flush leaves, as keys.go and codec.go
// describe it.
func TestLayout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, redistest.Options{})
	s := b.open(t, 2)
	v0 := recordtest.NewSet("http://example.test/a", "product", 3, 0)
	putFlush(t, s, v0)

	schema, err := b.raw.HGetAll(ctx, b.key("schema", "", "")).Result()
	if err != nil {
		t.Fatal(err)
	}
	for f, typ := range map[string]string{"product": "", "product.price": "float", "product.stock": "int", "product.released": "time",
		"product.tags": "list of string", "product.dates": "list of time", "article": "", "article.words": "int", "empty_rule": ""} {
		if got, ok := schema[f]; !ok || got != typ {
			t.Errorf("schema %s: %q (%v), want %q", f, got, ok, typ)
		}
	}

	raw, err := b.raw.HGet(ctx, b.key("cur", "product", ""), v0.Key).Result()
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Key, Rule string
		Records   []map[string]any
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	r0 := v.Records[0]
	if v.Key != v0.Key || v.Rule != "product" || len(v.Records) != 3 || r0["crawl"] != recordtest.Crawl || r0["idx"] != 0.0 ||
		r0["fetched_at"] != "2026-11-23T01:02:03.456789123Z" || r0["released"] != "1999-01-02T02:04:05.123456789Z" ||
		r0["status"] != "valid" || r0["visit"] != 0.0 || r0["stock"] != float64(-1<<40) {
		t.Fatalf("stored value %s", raw)
	}
	if _, ok := r0["change"]; ok {
		t.Fatalf("a first visit's record has a change member: %s", raw)
	}
	if _, ok := v.Records[2]["price"]; ok {
		t.Fatalf("an absent field is present: %s", raw)
	}

	counts, err := b.raw.HGetAll(ctx, b.key("count", "product", "")).Result()
	if err != nil {
		t.Fatal(err)
	}
	if counts["records"] != "3" || counts["invalid"] != "1" || counts["field:title"] != "3" || counts["field:price"] != "2" {
		t.Fatalf("counts %v", counts)
	}

	// A revisit: the value replaced is the version, byte for byte; the
	// changed records are counted.
	v1 := recordtest.NewSet(v0.Key, "product", 3, 1)
	putFlush(t, s, v1)
	versions, err := b.raw.LRange(ctx, b.key("ver", "product", v0.Key), 0, -1).Result()
	if err != nil || len(versions) != 1 || versions[0] != raw {
		t.Fatalf("versions %q, %v; want the value replaced", versions, err)
	}
	if c := expectCounts(t, b.reader(t), "product"); c["product"].Changed != 3 {
		t.Fatalf("counts %v: want 3 changed", c)
	}
}

// TestSameSetAgain: a Set put again unchanged (a Flush retried after its
// reply was lost) replaces nothing: no version, the same counts.
func TestSameSetAgain(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Options{})
	s := b.open(t, 2)
	a := recordtest.NewSet("k", "product", 2, 1)
	putFlush(t, s, a)
	putFlush(t, s, a)
	putFlush(t, s, a, a)
	r := b.reader(t)
	if v, err := r.Versions(context.Background(), "k", "product"); err != nil || len(v) != 0 {
		t.Fatalf("versions %v, %v; want none", v, err)
	}
	expectCounts(t, r, "product")
}

// TestSchemaRestored: the schema deleted under a running sink comes back
// with its next Flush, and every Set reads back.
func TestSchemaRestored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, redistest.Options{})
	s := b.open(t, 0)
	a, c := recordtest.NewSet("a", "product", 2, 1), recordtest.NewSet("c", "article", 1, 1)
	putFlush(t, s, a)
	if err := b.raw.Del(ctx, b.key("schema", "", "")).Err(); err != nil {
		t.Fatal(err)
	}
	putFlush(t, s, c)
	sets, err := b.reader(t).Sets(ctx)
	if err != nil || len(sets) != 2 || sets[0].Key != "c" || sets[1].Key != "a" {
		t.Fatalf("sets %v, %v; want c (article) and a (product)", sets, err)
	}
}

// TestCountsAfterDelete: a rule's hash of current Sets deleted by hand
// takes its counts along: the reader counts none, and the next Flush
// counts from nothing.
func TestCountsAfterDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, redistest.Options{})
	s := b.open(t, 0)
	putFlush(t, s, recordtest.NewSet("a", "product", 3, 1), recordtest.NewSet("b", "article", 2, 1))
	if err := b.raw.Del(ctx, b.key("cur", "product", "")).Err(); err != nil {
		t.Fatal(err)
	}
	r := b.reader(t)
	if c := expectCounts(t, r, "article"); len(c) != 1 {
		t.Fatalf("counts %v: want article only", c)
	}
	putFlush(t, s, recordtest.NewSet("c", "product", 1, 1))
	if c := expectCounts(t, r, "article", "product"); c["product"].Records != 1 {
		t.Fatalf("counts %v: want 1 product record", c)
	}
}

// TestWriterBetween: another worker's Flush of the same page between this
// Flush's read and its script: the script writes nothing, the Flush reads
// again, and marks, versions and counts are those of the order the
// writes took.
func TestWriterBetween(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, redistest.Options{})
	s1, s2 := b.open(t, 2), b.open(t, 2)
	v1, v2 := recordtest.NewSet("k", "product", 3, 1), recordtest.NewSet("k", "product", 3, 2)
	v3 := recordtest.NewSet("k", "product", 3, 2) // v2's values, a later visit
	for i := range v3.Records {
		v3.Records[i].Visit = 3
	}
	putFlush(t, s1, v1)
	calls := 0
	redissink.SetBeforeScript(s1, func() {
		if calls++; calls == 1 {
			putFlush(t, s2, v2)
		}
	})
	putFlush(t, s1, v3)
	if calls != 2 {
		t.Fatalf("the script ran %d times, want 2 (the first refused)", calls)
	}
	r := b.reader(t)
	cur, err := r.Get(ctx, "k")
	if err != nil || len(cur) != 1 {
		t.Fatalf("Get: %v, %v", cur, err)
	}
	for _, rec := range cur[0].Records {
		if rec.Visit != 3 || rec.Change != record.Same {
			t.Fatalf("record %d: visit %d change %q; want visit 3 marked same (against v2)", rec.Index, rec.Visit, rec.Change)
		}
	}
	versions, err := r.Versions(ctx, "k", "product")
	if err != nil || len(versions) != 2 || versions[0].Records[0].Visit != 1 || versions[1].Records[0].Visit != 2 {
		t.Fatalf("versions %v, %v; want v1 then v2", versions, err)
	}
	expectCounts(t, r, "product")
}

// TestWritersRace: two sinks, four writers each, on overlapping pages:
// counts stay those of the Sets, versions within keep_versions, each
// page's Set one that was put.
func TestWritersRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, redistest.Options{})
	sinks := []*redissink.Sink{b.open(t, 2), b.open(t, 2)}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := sinks[w%2]
			for i := 0; i < 30; i++ {
				set := recordtest.NewSet(fmt.Sprintf("k%d", i%10), "product", i%4, w*100+i)
				if err := s.Put(ctx, set); err != nil {
					errs <- err
					return
				}
				if i%3 == 2 {
					if err := s.Flush(ctx); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r := b.reader(t)
	expectCounts(t, r)
	for i := 0; i < 10; i++ {
		key := fmt.Sprintf("k%d", i)
		v, err := r.Versions(ctx, key, "product")
		if err != nil || len(v) > 2 {
			t.Fatalf("%s: %d versions, %v", key, len(v), err)
		}
	}
}

// TestWrongType: a key of the layout made another type by hand fails the
// Flush before it writes anything, naming the key; the Sets stay queued
// and go once the key is gone.
func TestWrongType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, redistest.Options{})
	s := b.open(t, 1)
	a1, b1 := recordtest.NewSet("a", "product", 1, 1), recordtest.NewSet("b", "product", 2, 1)
	putFlush(t, s, a1, b1)
	bad := b.key("ver", "product", "b")
	if err := b.raw.Set(ctx, bad, "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	a2, b2 := recordtest.NewSet("a", "product", 2, 2), recordtest.NewSet("b", "product", 1, 2)
	for _, set := range []record.Set{a2, b2} {
		if err := s.Put(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") || !strings.Contains(err.Error(), bad) {
		t.Fatalf("Flush with %s a string: %v, want WRONGTYPE naming it", bad, err)
	}
	r := b.reader(t)
	if got, err := r.Get(ctx, "a"); err != nil || len(got) != 1 || got[0].Records[0].Visit != 1 {
		t.Fatalf("a after the failed Flush: %v, %v; want a1 still", got, err)
	}
	if err := b.raw.Del(ctx, bad).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Get(ctx, "b"); err != nil || len(got) != 1 || got[0].Records[0].Visit != 2 {
		t.Fatalf("b after the key went: %v, %v; want b2", got, err)
	}
	expectCounts(t, r, "product")
}
