package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/jsonlsink"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// tryOut is `distscrape try --json`, as a test reads it.
type tryOut struct {
	Key, URL, Error string
	Status          int
	Rules           []struct {
		Rule    string
		Matched bool
		Records []struct {
			Index   int
			Status  string
			Stored  bool
			Problem string
			Fields  map[string]any
			Empty   []struct {
				Field    string
				Required bool
				Why      string
			} `json:"empty_fields"`
		}
	}
	Links []struct{ URL string }
	Out   []struct{ URL, Why string } `json:"out_of_scope"`
}

func runTry(t *testing.T, cmd testbin.Cmd, wantCode int, args ...string) tryOut {
	t.Helper()
	r := cmd.Run(t, time.Minute, append([]string{"try", "--json"}, args...)...)
	if r.Code != wantCode {
		t.Fatalf("try %v: want exit %d\n%s", args, wantCode, r)
	}
	var out tryOut
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("try %v: %v\n%s", args, err, r)
	}
	return out
}

// storedOf is what try says the crawl stores, by rule: the records' fields
// by index, as JSON values.
func (o tryOut) storedOf() map[string][]any {
	out := map[string][]any{}
	for _, r := range o.Rules {
		for _, rec := range r.Records {
			if rec.Stored {
				out[r.Rule] = append(out[r.Rule], jsonValue(rec.Fields))
			}
		}
	}
	return out
}

// jsonValue is v as decoded JSON, for comparing typed values with printed ones.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// TestTryMatchesCrawl: `try` on a listing page, a product page and a
// captcha page, by URL and from a saved file, gives the records the
// crawl wrote of them into jsonl, and says the captcha page fails.
func TestTryMatchesCrawl(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: shop",
		"tracker: {kind: memory, max_attempts: 1}",
		shopScraper(site), "fetch: {concurrency: 8, timeout: 10s}", "saver: {kind: none}",
		shopRules, "records: {kind: jsonl, dir: out/records}")
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, runTimeout, "crawl", "-c", cfg, "--id", "w", "--no-progress"); r.Code != exitDeadLetters { // the captchas
		t.Fatalf("crawl: %s", r)
	}
	sets, err := jsonlsink.NewReader(filepath.Join(dir, "out", "records"), "shop").Sets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	crawled := map[string]map[string][]any{} // key, rule: records' fields by index
	for _, s := range sets {
		if crawled[s.Key] == nil {
			crawled[s.Key] = map[string][]any{}
		}
		for _, r := range s.Records {
			if r.Status != record.Valid {
				t.Errorf("%s: an invalid record stored: %+v", s.Key, r)
			}
			crawled[s.Key][s.Rule] = append(crawled[s.Key][s.Rule], jsonValue(r.Fields))
		}
	}

	listing, product := site.URL()+fixturesite.ShopPath, site.ProductURLs()[0]
	for _, u := range []string{listing, product} {
		got := runTry(t, cmd, 0, "-c", cfg, u)
		if got.Error != "" || !reflect.DeepEqual(got.storedOf(), crawled[u]) || len(crawled[u]) == 0 {
			t.Errorf("try %s: records\n%v\nthe crawl wrote\n%v (error %q)", u, got.storedOf(), crawled[u], got.Error)
		}
		// The same page saved to a file, with --url for its match and links.
		_, body := get(t, http.DefaultClient, u, "")
		saved := filepath.Join(dir, "saved.html")
		if err := os.WriteFile(saved, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		fromFile := runTry(t, cmd, 0, "-c", cfg, "--url", u, saved)
		if !reflect.DeepEqual(fromFile.storedOf(), crawled[u]) || !reflect.DeepEqual(fromFile.Links, got.Links) {
			t.Errorf("try --url %s FILE: records %v links %v; by URL %v %v", u, fromFile.storedOf(), fromFile.Links, crawled[u], got.Links)
		}
	}

	// The listing's links: the crawl's pages in scope, the blog out of it.
	got := runTry(t, cmd, 0, "-c", cfg, listing)
	links := map[string]bool{}
	for _, l := range got.Links {
		links[l.URL] = true
	}
	if !links[product] || len(got.Out) == 0 {
		t.Errorf("links %v out %v: want %s followed and the blog left out", got.Links, got.Out, product)
	}
	for _, o := range got.Out {
		if !strings.Contains(o.URL, "/articles/") || o.Why == "" || links[o.URL] {
			t.Errorf("left out %s (%s): want only the blog, with a reason", o.URL, o.Why)
		}
	}

	// A captcha page: no record stored by the crawl; try exits 1 and says
	// which required field is missing and why.
	captcha := site.CaptchaURLs()[0]
	if crawled[captcha] != nil {
		t.Errorf("the crawl stored records of the captcha page %s: %v", captcha, crawled[captcha])
	}
	got = runTry(t, cmd, 1, "-c", cfg, "--rule", "product", captcha)
	if len(got.Rules) != 1 || got.Rules[0].Rule != "product" || len(got.Rules[0].Records) != 1 {
		t.Fatalf("try --rule product %s: %+v", captcha, got.Rules)
	}
	rec := got.Rules[0].Records[0]
	if rec.Stored || rec.Status != "invalid" || !strings.Contains(got.Error, "field name: required, not found") || len(got.storedOf()) != 0 {
		t.Errorf("captcha: %+v, error %q", rec, got.Error)
	}
	missing := map[string]string{}
	for _, e := range rec.Empty {
		if e.Required {
			missing[e.Field] = e.Why
		}
	}
	if missing["name"] != "css matched nothing" {
		t.Errorf("captcha: required fields missing %v; want name: css matched nothing", missing)
	}
}

// TestTryExplainsFields: each way a field ends without a value is named,
// required or not; the text output says the page fails; bad arguments
// are usage errors.
func TestTryExplainsFields(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: shop", shopScraper(site), "saver: {kind: none}", `extract:
  - name: product
    match: '/shop/p/\d+$'
    fields:
      name: {css: h1.nme, required: true}
      price: {css: h1.name, type: float}
      stock: {regex: 'in stock: (\d+)'}
      sku: {css: .sku, default: none}
      title: {css: h1.name}`)
	cmd := testbin.Cmd{Dir: dir}
	u := site.ProductURLs()[0]
	got := runTry(t, cmd, 1, "-c", cfg, u)
	why := map[string]string{}
	for _, e := range got.Rules[0].Records[0].Empty {
		why[e.Field] = e.Why
	}
	want := map[string]string{"name": "css matched nothing", "stock": "regex matched nothing", "sku": "css matched nothing"}
	for f, w := range want {
		if why[f] != w {
			t.Errorf("field %s: why %q, want %q", f, why[f], w)
		}
	}
	if !strings.Contains(why["price"], "is not a float") || why["title"] != "" {
		t.Errorf("price: why %q (want a conversion error); title: %q (want none)", why["price"], why["title"])
	}
	r := cmd.Run(t, time.Minute, "try", "-c", cfg, u)
	if r.Code != 1 || !strings.Contains(r.Stdout, "a crawl would FAIL this page") || !strings.Contains(r.Stdout, "name: REQUIRED, missing: css matched nothing") {
		t.Errorf("try (text): %s", r)
	}
	for _, args := range [][]string{
		{"try", "-c", cfg},
		{"try", "-c", cfg, u, u},
		{"try", "-c", cfg, "--rule", "nope", u},
		{"try", "-c", cfg, "--url", u, u},
		{"try", "-c", cfg, filepath.Join(dir, "missing.html")},
		{"try", "-c", cfg, "--url", "ftp://x/", cfg},
	} {
		if r := cmd.Run(t, time.Minute, args...); r.Code != 2 {
			t.Errorf("%v: want exit 2\n%s", args, r)
		}
	}
}
