package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/distscrape/distscrape/record/jsonlsink"
	"github.com/distscrape/distscrape/test/fixturesite"
)

// extractRule is the distscrape side of the extraction figures: one rule,
// the five CSS fields of a fixture page of Options.Data (required and
// typed, as onFields checks them for Colly) and its main text.
// Without main text, the body field is left out.
const extractRule = `extract:
  - name: page
    match: '^http://[^/]+/(page/[0-9]+\.html)?$'
    fields:
      title:     {css: "h1#top", required: true}
      price:     {css: "span.price", type: float, required: true}
      published: {css: "time[datetime]", attr: datetime, type: time, required: true}
      category:  {css: "span.category", required: true}
      author:    {css: "span.author", required: true}
`

const mainTextField = "      body:      {text: main, required: true}\n"

// extractCrawlers are the contenders of the extraction figures, all on a
// site with Options.Data, in the order the goals and extractTable read
// them by index: distscrape without extraction, with the five fields and
// main text, with the five fields only; Colly without fields, with the
// five fields, with the five fields and main text.
func extractCrawlers() []crawler {
	return []crawler{
		{name: "distscrape crawl (memory tracker), no extraction", run: runDistscrapeMemory},
		{name: "distscrape crawl + 5 CSS fields + text: main → jsonl", run: distscrapeFields(true), check: checkDistscrapeRecords(true)},
		{name: "distscrape crawl + 5 CSS fields → jsonl", run: distscrapeFields(false), check: checkDistscrapeRecords(false)},
		{name: "Colly v2, no fields", run: runColly},
		{name: "Colly v2 + 5 fields (OnHTML, goquery) → JSON lines", run: collyFields(false), check: checkCollyRecords(false)},
		{name: "Colly v2 + 5 fields + main text (go-readability) → JSON lines", run: collyFields(true), check: checkCollyRecords(true)},
	}
}

// recordsDir is where the run writing bodies to out writes its records.
func recordsDir(out string) string { return out + ".records" }

// distscrapeFields is the memory crawl with extractRule (and its main text
// field when withMain) into the jsonl sink.
func distscrapeFields(withMain bool) func(ctx context.Context, e *crawlEnv, out string) error {
	return func(ctx context.Context, e *crawlEnv, out string) error {
		cfg, err := e.config(out, "memory", "", e.conc, e.conc)
		if err != nil {
			return err
		}
		rule := extractRule
		if withMain {
			rule += mainTextField
		}
		f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "%srecords: {kind: jsonl, dir: %q}\n", rule, recordsDir(out))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		return e.exec(ctx, e.distscrape, "crawl", "-c", cfg, "--id", "bench", "--no-progress")
	}
}

func collyFields(withMain bool) func(ctx context.Context, e *crawlEnv, out string) error {
	return func(ctx context.Context, e *crawlEnv, out string) error {
		args := []string{"colly", "-url", e.base, "-out", out, "-parallelism", fmt.Sprint(e.conc),
			"-records", filepath.Join(recordsDir(out), "colly.jsonl")}
		if withMain {
			args = append(args, "-main")
		}
		return e.exec(ctx, e.self, args...)
	}
}

// checkDistscrapeRecords reads the jsonl sink's records back and checks
// one per page, each with the page's fields.
func checkDistscrapeRecords(withMain bool) func(e *crawlEnv, out string) error {
	return func(e *crawlEnv, out string) error {
		sets, err := jsonlsink.NewReader(recordsDir(out), fmt.Sprintf("bench-%d", e.runs)).Sets(context.Background())
		if err != nil {
			return fmt.Errorf("records: %w", err)
		}
		seen := map[string]bool{}
		for _, s := range sets {
			if len(s.Records) != 1 {
				return fmt.Errorf("records of %s: %d, want 1", s.Key, len(s.Records))
			}
			r := s.Records[0]
			price, _ := r.Fields["price"].(float64)
			published, _ := r.Fields["published"].(time.Time)
			str := func(k string) string { v, _ := r.Fields[k].(string); return v }
			if err := e.checkRecord(r.URL, str("title"), price, published, str("category"), str("author"), str("body"), withMain); err != nil {
				return err
			}
			seen[r.URL] = true
		}
		return e.checkAllPages(seen)
	}
}

func checkCollyRecords(withMain bool) func(e *crawlEnv, out string) error {
	return func(e *crawlEnv, out string) error {
		f, err := os.Open(filepath.Join(recordsDir(out), "colly.jsonl"))
		if err != nil {
			return err
		}
		defer f.Close()
		seen := map[string]bool{}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r collyRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				return fmt.Errorf("colly records: %w", err)
			}
			if err := e.checkRecord(r.URL, r.Title, r.Price, r.Published, r.Category, r.Author, r.Body, withMain); err != nil {
				return err
			}
			seen[r.URL] = true
		}
		if err := sc.Err(); err != nil {
			return err
		}
		return e.checkAllPages(seen)
	}
}

// checkRecord compares one page's record with the site's truth; the main
// text must hold the page's text and no boilerplate.
func (e *crawlEnv) checkRecord(u, title string, price float64, published time.Time, category, author, body string, withMain bool) error {
	pu, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("record of %q: %w", u, err)
	}
	n := 0
	if p := strings.TrimSuffix(strings.TrimPrefix(pu.Path, "/page/"), ".html"); p != "/" {
		if n, err = strconv.Atoi(p); err != nil {
			return fmt.Errorf("record of %s: not a page", u)
		}
	}
	d, ok := e.site.PageData(n)
	if !ok {
		return fmt.Errorf("record of %s: the site has no data for it", u)
	}
	if got, want := fmt.Sprintf("%s|%.2f|%s|%s|%s", title, price, published.UTC().Format(time.RFC3339), category, author),
		fmt.Sprintf("%s|%.2f|%s|%s|%s", d.Title, d.Price, d.Published.Format(time.RFC3339), d.Category, d.Author); got != want {
		return fmt.Errorf("record of %s: %s, want %s", u, got, want)
	}
	if !withMain {
		return nil
	}
	if len(body) < e.site.Options().PageSize/4 {
		return fmt.Errorf("record of %s: %d bytes of main text, want most of the page's %d", u, len(body), e.site.Options().PageSize)
	}
	for _, b := range fixturesite.DataBoilerplate {
		if strings.Contains(body, b) {
			return fmt.Errorf("record of %s: main text holds the boilerplate %q", u, b)
		}
	}
	return nil
}

func (e *crawlEnv) checkAllPages(seen map[string]bool) error {
	for _, u := range e.site.Pages() {
		if !seen[u] {
			return fmt.Errorf("%d records for %d pages; none for %s: a crawl that skips records does not count", len(seen), e.expect, u)
		}
	}
	return nil
}

// extractFigures crawls a site with Options.Data with and without
// extraction, against Colly with and without the same fields, then
// measures the record sinks.
func extractFigures(ctx context.Context, w io.Writer, o options, rs *redisServer, work string) ([]goal, error) {
	site := fixturesite.New(fixturesite.Options{Pages: o.pages, Links: 10, PageSize: 8192, Data: true})
	e, err := newCrawlEnv(o, rs, work, site)
	if err != nil {
		return nil, err
	}
	defer site.Close()
	// distscrape finds links as it does by default, by parsing: the parse
	// of a page is then shared by the link scraper and the extractor.
	e.parseLinks = true
	cs := extractCrawlers()
	figs, err := e.rounds(ctx, cs, o.rounds, "extract")
	if err != nil {
		return nil, err
	}
	extractTable(w, fmt.Sprintf("Extraction: %d pages × 10 links, 8 KiB, 5 fields and an article, concurrency %d, server latency 0s (%d runs each)",
		o.pages, o.conc, o.rounds), figs)
	plain, withMain, fields5, colly5, collyMain := figs[0].median(), figs[1].median(), figs[2].median(), figs[4].median(), figs[5].median()
	goals := []goal{
		{what: "crawl with 5 CSS fields + text: main ≥ 75% of the crawl without (extraction costs ≤ 25%)", got: withMain / plain, want: 0.75, unit: "%"},
		{what: "crawl with 5 CSS fields + text: main ≥ 1.0× Colly with the 5 fields", got: withMain / colly5, want: 1},
		{what: "crawl with 5 CSS fields + text: main ≥ 1.0× Colly with the 5 fields and main text", got: withMain / collyMain, want: 1},
		{what: "crawl with 5 CSS fields ≥ 1.0× Colly with the 5 fields", got: fields5 / colly5, want: 1},
	}
	g, err := sinkFigures(ctx, w, o)
	if err != nil {
		return nil, err
	}
	return append(goals, g...), nil
}
