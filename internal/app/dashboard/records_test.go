package dashboard

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/sqlitesink"
)

// sqliteCounts writes records into a SQLite sink and returns the
// RecordCounts of a reader of it, as the command line builds it.
func sqliteCounts(t *testing.T) RecordCounts {
	t.Helper()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "records.db")
	schemas := []record.Schema{{Rule: "product", Fields: []record.Field{{Name: "name", Type: record.String}}}, {Rule: "listing"}}
	sink, err := sqlitesink.New(ctx, sqlitesink.Config{Path: db}, record.Options{Crawl: "shop", Worker: "w", Schemas: schemas})
	if err != nil {
		t.Fatal(err)
	}
	set := func(key, rule string, statuses ...record.Status) record.Set {
		s := record.Set{Key: key, Rule: rule}
		for i, st := range statuses {
			s.Records = append(s.Records, record.Record{Crawl: "shop", Key: key, Rule: rule, Index: i, Status: st})
		}
		return s
	}
	// /p/3 is visited again with its name changed.
	revisit := set("/p/3", "product", record.Valid)
	revisit.Records[0].Visit, revisit.Records[0].Fields = 1, map[string]any{"name": "renamed"}
	for _, s := range []record.Set{set("/p/1", "product", record.Valid), set("/p/2", "product", record.Invalid),
		set("/p/3", "product", record.Valid), set("/l/1", "listing", record.Valid, record.Valid), revisit} {
		if err := sink.Put(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rd, err := sqlitesink.NewReader(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return func(ctx context.Context) (map[string]RuleRecords, error) {
		counts, err := rd.Counts(ctx)
		out := map[string]RuleRecords{}
		for rule, c := range counts {
			out[rule] = RuleRecords{Written: c.Records, Invalid: c.Invalid, Changed: c.Changed}
		}
		return out, err
	}
}

// stateRecords reads /api/state until it has a snapshot and returns its
// records member as raw JSON ("" when absent).
func stateRecords(t *testing.T, b bundle) (string, json.RawMessage) {
	t.Helper()
	var raw map[string]json.RawMessage
	waitFor(t, "a snapshot", func() bool {
		res, body := do(t, "GET", b.url+"/api/state", "", map[string]string{"Authorization": "Bearer " + testToken})
		return res.StatusCode == 200 && json.Unmarshal([]byte(body), &raw) == nil
	})
	_, page := do(t, "GET", b.url+"/", "", map[string]string{"Authorization": "Bearer " + testToken})
	return page, raw["records"]
}

// TestOverviewRecords: with a source of record counts, the overview's
// state carries the records written, kept invalid and changed on a
// revisit per rule, sorted by rule, and the page has their table;
// without one, no records member.
func TestOverviewRecords(t *testing.T) {
	b := setup(t, Config{Token: testToken, Records: sqliteCounts(t)})
	page, raw := stateRecords(t, b)
	var got recordsView
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("records %s: %v", raw, err)
	}
	want := recordsView{Rules: []ruleView{{Rule: "listing", Written: 2}, {Rule: "product", Written: 3, Invalid: 1, Changed: 1}}}
	if got.Error != "" || len(got.Rules) != 2 || got.Rules[0] != want.Rules[0] || got.Rules[1] != want.Rules[1] {
		t.Errorf("records %+v, want %+v", got, want)
	}
	if !strings.Contains(page, `id="records-body"`) || !strings.Contains(page, "changed on a revisit") {
		t.Error("the overview has no records table")
	}

	b = setup(t, Config{Token: testToken})
	if _, raw := stateRecords(t, b); raw != nil {
		t.Errorf("records %s without a source, want none", raw)
	}

	// A sink that cannot be read says why, its secret redacted.
	b = setup(t, Config{Token: testToken, Redact: func(s string) string { return strings.ReplaceAll(s, "s3cret", "xxx") },
		Records: func(context.Context) (map[string]RuleRecords, error) {
			rd, err := sqlitesink.NewReader(context.Background(), filepath.Join(t.TempDir(), "s3cret", "missing", "r.db"), "shop")
			if err == nil {
				defer rd.Close()
				_, err = rd.Counts(context.Background())
			}
			return nil, err
		}})
	_, raw = stateRecords(t, b)
	if err := json.Unmarshal(raw, &got); err != nil || got.Error == "" || strings.Contains(got.Error, "s3cret") || len(got.Rules) != 0 {
		t.Errorf("records of an unreadable sink: %s (%v)", raw, err)
	}
}
