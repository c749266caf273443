package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/extract"
	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// This file is `distscrape try`: the crawl's fetch, scraper and extract
// rules on one page, printed instead of stored.

func tryCommand() *cli.Command {
	return &cli.Command{
		Name:      "try",
		Usage:     "run the crawl's rules on one URL or saved file and print the records and links",
		ArgsUsage: "URL|PATH",
		Description: `Fetches URL as the crawl would (its fetch settings, robots.txt, headers,
cookies, login and render rules), or reads a saved page at PATH, then runs the
scraper and the extract rules that match it, exactly as a crawl does. It prints
each rule's records (the ones the crawl would store, and the invalid ones),
for each field without a value why (the selector matched nothing, the value
is not of its type, ...), and the links the crawl would follow and those it
leaves out of scope. Nothing is stored and no tracker is touched.
A saved page is HTML or JSON, by its extension or its content; give --url
for the URL the rules' match and relative links see (default file://PATH).
Exits 1 when the crawl would fail the page (a required field missing, a
refused response), 0 otherwise.
Examples:
   distscrape try -c examples/shop.yaml http://127.0.0.1:8080/shop/p/1
   distscrape try -c shop.yaml --url https://shop.test/shop/p/1 --rule product saved.html`,
		Flags: []cli.Flag{configFlag,
			&cli.StringFlag{Name: "rule", Usage: "show only the rule `NAME` (the others still run, as in the crawl)"},
			&cli.StringFlag{Name: "url", Usage: "a saved page's `URL`, for the rules' match and its relative links"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
		},
		Action: runTry,
	}
}

// tryResult is what try found, as --json prints it.
type tryResult struct {
	Key         string `json:"key"`
	URL         string `json:"url"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Bytes       int    `json:"bytes"`
	// Error is why the crawl would fail the page (a refused response, an
	// invalid record of a rule with on_invalid: fail); the page's records
	// are then not stored.
	Error string    `json:"error,omitempty"`
	Rules []tryRule `json:"rules"`
	Links []tryLink `json:"links"`
	Out   []tryLink `json:"out_of_scope"`
}

// tryRule is one rule on the page.
type tryRule struct {
	Rule      string      `json:"rule"`
	Matched   bool        `json:"matched"` // its match matched the page's URL
	OnInvalid string      `json:"on_invalid"`
	Records   []tryRecord `json:"records"`
}

// tryRecord is one record, and whether the crawl would store it.
type tryRecord struct {
	Index   int            `json:"index"`
	Status  record.Status  `json:"status"`
	Stored  bool           `json:"stored"`
	Problem string         `json:"problem,omitempty"`
	Fields  map[string]any `json:"fields"`
	Empty   []tryField     `json:"empty_fields,omitempty"`
}

// tryField is a field without a value, and why.
type tryField struct {
	Field    string `json:"field"`
	Required bool   `json:"required,omitempty"`
	Default  bool   `json:"default,omitempty"`
	Why      string `json:"why"`
}

// tryLink is a link of the page: followed, or left out and why.
type tryLink struct {
	URL string `json:"url"`
	Why string `json:"why,omitempty"`
}

func runTry(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("try takes one URL or PATH (got %d arguments)", c.NArg())
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	if len(cfg.Extract) == 0 && len(cfg.Scraper.Follow) == 0 {
		slog.Warn("the config has no extract: rules: try shows the links only")
	}
	if r := c.String("rule"); r != "" && !slices.ContainsFunc(cfg.Extract, func(e config.ExtractRule) bool { return e.Name == r }) {
		return usagef("--rule %q: no such extract rule (rules: %s)", r, ruleNames(cfg))
	}
	ctx := c.Context
	log := slog.Default()
	sc, err := openScraper(cfg, log)
	if err != nil {
		return within("scraper", err)
	}
	arg := c.Args().First()
	var item tracker.Item
	var resp *fetch.Response
	if isWebURL(arg) || (cfg.Scraper.Kind == "id" && !fileExists(arg)) {
		if c.String("url") != "" {
			return usagef("--url is for a saved file; %s is fetched", arg)
		}
		item, resp, err = tryFetch(ctx, cfg, sc, arg, log)
	} else {
		item, resp, err = tryFile(arg, c.String("url"))
	}
	if err != nil {
		return err
	}
	res, failed := tryPage(ctx, cfg, sc, item, resp)
	if r := c.String("rule"); r != "" {
		res.Rules = slices.DeleteFunc(res.Rules, func(x tryRule) bool { return x.Rule != r })
	}
	if c.Bool("json") {
		enc := json.NewEncoder(os.Stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		printTry(os.Stdout, res)
	}
	if failed {
		return cli.Exit("", exitRuntime)
	}
	return nil
}

func ruleNames(cfg *config.Config) string {
	var names []string
	for _, r := range cfg.Extract {
		names = append(names, r.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func isWebURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// tryFetch fetches arg as the crawl fetches a seed: the item the seed
// rules make of it, its request (scraper.requests), the crawl's fetch
// client, and its render and login rules.
func tryFetch(ctx context.Context, cfg *config.Config, sc scraper.ScopedScraper, arg string, log *slog.Logger) (tracker.Item, *fetch.Response, error) {
	items, err := seedItems(cfg, []string{arg}, argumentName)
	if err != nil {
		return tracker.Item{}, nil, err
	}
	sr, err := newSeedRules(cfg, nil)
	if err != nil {
		return tracker.Item{}, nil, err
	}
	if err := sr.apply(ctx, items); err != nil {
		return tracker.Item{}, nil, err
	}
	item := items[0]
	fe, err := openFetcher(cfg, sc.InScope, nil, log)
	if err != nil {
		return item, nil, within("fetch", err)
	}
	defer fe.Close()
	pages, err := openPages(cfg, fe, sc.InScope, log, func(error) {})
	if err != nil {
		return item, nil, err
	}
	defer pages.Close()
	if err := pages.loginFirst(ctx); err != nil {
		return item, nil, err
	}
	req, err := sc.Request(ctx, item)
	if err != nil {
		return item, nil, fmt.Errorf("build request: %w", err)
	}
	resp, err := pages.Fetch(ctx, req)
	if err != nil {
		return item, nil, fmt.Errorf("fetch %s: %w", item.Key, err)
	}
	return item, resp, nil
}

// tryFile reads a saved page as the response to pageURL (default its
// file:// URL): HTML or JSON, by its extension, else by its content.
func tryFile(path, pageURL string) (tracker.Item, *fetch.Response, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return tracker.Item{}, nil, usagef("%s: not a URL (http:// or https://) and not a readable file: %w", path, err)
	}
	if pageURL == "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return tracker.Item{}, nil, err
		}
		pageURL = (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	} else if !isWebURL(pageURL) {
		return tracker.Item{}, nil, usagef("--url %q: want an http:// or https:// URL", pageURL)
	}
	u, err := url.Parse(pageURL)
	if err != nil {
		return tracker.Item{}, nil, usagef("--url %q: %w", pageURL, err)
	}
	ct := savedType(path, body)
	mt, _, _ := mime.ParseMediaType(ct)
	resp := &fetch.Response{URL: u, Status: http.StatusOK, Header: http.Header{"Content-Type": {ct}},
		ContentType: mt, Body: body, FetchedAt: time.Now()}
	return tracker.Item{Key: pageURL}, resp, nil
}

// savedType is a saved page's Content-Type: by its extension, else JSON
// when it reads as JSON, else what the body sniffs as.
func savedType(path string, body []byte) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm", ".xhtml":
		return "text/html; charset=utf-8"
	case ".json":
		return "application/json"
	}
	if json.Valid(body) {
		return "application/json"
	}
	return http.DetectContentType(body)
}

// tryPage scrapes and extracts resp as the manager does (manager.process):
// the scraper first (its validation may refuse the page), then the
// extract rules. failed says the crawl would fail the page.
func tryPage(ctx context.Context, cfg *config.Config, sc scraper.ScopedScraper, item tracker.Item, resp *fetch.Response) (tryResult, bool) {
	res := tryResult{Key: item.Key, URL: resp.URL.String(), Status: resp.Status, ContentType: resp.Header.Get("Content-Type"),
		Bytes: len(resp.Body), Links: []tryLink{}, Out: []tryLink{}, Rules: []tryRule{}}
	var fail []string
	seen := map[string]bool{}
	sctx := scraper.WithNotFollowed(ctx, func(u, why string) {
		if !seen[u] {
			seen[u] = true
			res.Out = append(res.Out, tryLink{URL: u, Why: why})
		}
	})
	found, err := sc.Scrape(sctx, item, resp)
	if err == nil {
		var rules *seedRules
		if rules, err = newSeedRules(cfg, nil); err == nil && rules.rules != nil {
			found, err = rules.rules.Discovered(ctx, item, found)
		}
	}
	if err != nil {
		fail = append(fail, "scrape: "+err.Error())
	}
	for _, it := range found {
		res.Links = append(res.Links, tryLink{URL: it.Key})
	}
	if len(cfg.Extract) > 0 {
		ex, err := extract.Compile(cfg.ExtractRules(), extractOptions(cfg))
		if err != nil {
			return res, true // config validation compiled them already
		}
		p := &saver.Page{Key: item.Key, URL: resp.URL.String(), Status: resp.Status, ContentType: resp.Header.Get("Content-Type"),
			FetchedAt: resp.FetchedAt, Body: resp.Body, Labels: item.Labels, Visit: 1}
		trial := ex.Try(ctx, p)
		if trial.Err != nil {
			fail = append(fail, "extract: "+outcomeOf(trial.Err).Error())
		}
		res.Rules = tryRules(cfg, trial)
	}
	res.Error = redactor.String(strings.Join(fail, "; "))
	return res, len(fail) > 0
}

// tryRules is every rule of cfg with what it made of the page.
func tryRules(cfg *config.Config, trial extract.Trial) []tryRule {
	byName := map[string]extract.RuleTrial{}
	for _, rt := range trial.Rules {
		byName[rt.Rule] = rt
	}
	stored := map[string]bool{} // the rules whose Set the crawl stores
	for _, s := range trial.Sets {
		stored[s.Rule] = true
	}
	out := make([]tryRule, 0, len(cfg.Extract))
	for _, r := range cfg.Extract {
		rt, ok := byName[r.Name]
		tr := tryRule{Rule: r.Name, Matched: ok, OnInvalid: r.OnInvalid, Records: []tryRecord{}}
		for i, rec := range rt.Records {
			x := tryRecord{Index: rec.Index, Status: rec.Status, Problem: rec.Problem, Fields: rec.Fields,
				Stored: stored[r.Name] && (rec.Status == record.Valid || r.OnInvalid == extract.OnInvalidKeep)}
			for _, n := range rt.Notes[i] {
				x.Empty = append(x.Empty, tryField{Field: n.Field, Required: n.Required, Default: n.Default, Why: n.Why})
			}
			tr.Records = append(tr.Records, x)
		}
		out = append(out, tr)
	}
	return out
}

// printTry writes res for a person.
func printTry(w io.Writer, res tryResult) {
	fmt.Fprintf(w, "page %s\n  %d %s, %s\n", res.URL, res.Status, res.ContentType, humanBytes(int64(res.Bytes)))
	if res.Key != res.URL {
		fmt.Fprintf(w, "  item %s\n", res.Key)
	}
	if res.Error != "" {
		fmt.Fprintf(w, "  a crawl would FAIL this page: %s\n", res.Error)
	}
	for _, r := range res.Rules {
		switch {
		case !r.Matched:
			fmt.Fprintf(w, "\nrule %s: its match does not match this URL\n", r.Rule)
			continue
		case len(r.Records) == 0:
			fmt.Fprintf(w, "\nrule %s: no record (its each matched nothing)\n", r.Rule)
			continue
		}
		fmt.Fprintf(w, "\nrule %s: %d %s\n", r.Rule, len(r.Records), plural(int64(len(r.Records)), "record", "records"))
		for _, rec := range r.Records {
			state := "stored"
			switch {
			case rec.Status == record.Invalid && !rec.Stored:
				state = "INVALID, not stored (on_invalid: " + r.OnInvalid + ")"
			case rec.Status == record.Invalid:
				state = "INVALID, stored (on_invalid: keep)"
			case !rec.Stored:
				state = "not stored: the page fails"
			}
			fmt.Fprintf(w, "  [%d] %s\n", rec.Index, state)
			for _, name := range slices.Sorted(maps.Keys(rec.Fields)) {
				fmt.Fprintf(w, "      %s = %s\n", name, jsonText(rec.Fields[name]))
			}
			for _, f := range rec.Empty {
				what := "empty"
				switch {
				case f.Required:
					what = "REQUIRED, missing"
				case f.Default:
					what = "empty, took its default"
				}
				fmt.Fprintf(w, "      %s: %s: %s\n", f.Field, what, f.Why)
			}
		}
	}
	fmt.Fprintf(w, "\nlinks followed (in scope): %d\n", len(res.Links))
	for _, l := range res.Links {
		fmt.Fprintf(w, "  %s\n", l.URL)
	}
	fmt.Fprintf(w, "links left out (out of scope): %d\n", len(res.Out))
	for _, l := range res.Out {
		fmt.Fprintf(w, "  %s  (%s)\n", l.URL, l.Why)
	}
}

// jsonText is v as JSON, without the escapes of <, > and & meant for HTML.
func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
