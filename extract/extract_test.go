package extract

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
)

const listing = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Shop</title><base href="/shop/"></head>
<body>
<h1>  Our
  products </h1>
<ul class="products">
 <li class="product" data-sku="A1"><a href="p/1.html"><span class="name">Kettle</span></a>
   <span class="price">$1,234.50</span><span class="stock">yes</span>
   <span class="tag">kitchen</span><span class="tag">steel</span><time datetime="2026-03-04">4 March</time></li>
 <li class="product" data-sku="B2"><a href="p/2.html"><span class="name">Toaster</span></a>
   <span class="price">12,50 €</span><span class="stock">no</span><time datetime="2026-03-05">5 March</time></li>
 <li class="product" data-sku="C3"><a href="/elsewhere/3.html"><span class="name">Lamp</span></a>
   <span class="price">free</span><span class="stock">maybe</span></li>
</ul>
<script>var price = "$9";</script>
<p id="note">SKU-77 in <b>bold</b> text</p>
</body></html>`

const apiBody = `{"items":[{"id":1,"name":"Kettle","price":"1,234.50","tags":["kitchen","steel"]},
{"id":9007199254740993,"name":"Toaster","price":12.5,"tags":[]},{"id":3,"name":null,"price":"n/a"}],
"next":"/api?page=2","total":3}`

func htmlPage(body string) *saver.Page {
	return &saver.Page{Key: "http://shop.test/list.html", URL: "http://shop.test/list.html", Status: 200,
		ContentType: "text/html; charset=utf-8", Body: []byte(body),
		FetchedAt: time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("X", 3600)), Labels: []string{"shop"}, Visit: 2}
}

func jsonPage(body string) *saver.Page {
	return &saver.Page{Key: "42", URL: "http://shop.test/api?page=1", Status: 200,
		ContentType: "application/json", Body: []byte(body)}
}

func mustCompile(t testing.TB, rules ...Rule) *Extractor {
	t.Helper()
	e, err := Compile(rules, Options{Crawl: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// one runs a rule of one field over p and returns the field's value.
func one(t *testing.T, p *saver.Page, f Field) (any, bool) {
	t.Helper()
	f.Name = "v"
	sets, err := mustCompile(t, Rule{Name: "r", Match: ".", Fields: []Field{f}, OnInvalid: OnInvalidKeep}).Extract(context.Background(), p)
	if err != nil {
		t.Fatalf("%+v: %v", f, err)
	}
	rec := sets[0].Records[0]
	if rec.Status != record.Valid {
		t.Fatalf("%+v: invalid: %s", f, rec.Problem)
	}
	v, ok := rec.Fields["v"]
	return v, ok
}

// TestFieldKinds runs each kind of selector, with and without attr and
// all, over the listing or the API body.
func TestFieldKinds(t *testing.T) {
	cases := []struct {
		name string
		json bool
		f    Field
		want any // nil: not found
	}{
		{"css text collapses space", false, Field{CSS: "h1"}, "Our products"},
		{"css first of many", false, Field{CSS: ".name"}, "Kettle"},
		{"css attr", false, Field{CSS: "li.product", Attr: "data-sku"}, "A1"},
		{"css attr missing", false, Field{CSS: "h1", Attr: "data-x"}, nil},
		{"css none", false, Field{CSS: ".nothing"}, nil},
		{"css all", false, Field{CSS: ".name", All: true}, []any{"Kettle", "Toaster", "Lamp"}},
		{"css text of nested elements", false, Field{CSS: "#note"}, "SKU-77 in bold text"},
		{"css text leaves scripts out", false, Field{CSS: "body", Type: record.String}, nil},
		{"css url resolved against base", false, Field{CSS: ".product a", Attr: "href", Type: record.URL}, "http://shop.test/shop/p/1.html"},
		{"xpath element", false, Field{XPath: "//span[@class='name']"}, "Kettle"},
		{"xpath attribute node", false, Field{XPath: "//li/@data-sku", All: true}, []any{"A1", "B2", "C3"}},
		{"xpath element with attr", false, Field{XPath: "//time", Attr: "datetime", Type: record.Time}, time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)},
		{"xpath text node", false, Field{XPath: "//p[@id='note']/text()"}, "SKU-77 in"},
		{"xpath count", false, Field{XPath: "count(//li[@class='product'])", Type: record.Int}, int64(3)},
		{"xpath string", false, Field{XPath: "string(//title)"}, "Shop"},
		{"xpath boolean", false, Field{XPath: "boolean(//h1)", Type: record.Bool}, true},
		{"xpath none", false, Field{XPath: "//table"}, nil},
		{"regex named value", false, Field{Regex: `SKU-(?<value>\d+)`, Type: record.Int}, int64(77)},
		{"regex first group", false, Field{Regex: `(x)?data-sku="(\w+)"`}, "A1"},
		{"regex whole match", false, Field{Regex: `SKU-\d+`}, "SKU-77"},
		{"regex all", false, Field{Regex: `data-sku="(\w+)"`, All: true}, []any{"A1", "B2", "C3"}},
		{"regex none", false, Field{Regex: `nothing(\d)`}, nil},
		{"json string", true, Field{JSON: ".items[0].name"}, "Kettle"},
		{"json number kept exact", true, Field{JSON: ".items[1].id", Type: record.Int}, int64(9007199254740993)},
		{"json number as float", true, Field{JSON: ".items[1].price", Type: record.Float}, 12.5},
		{"json text as float", true, Field{JSON: ".items[0].price", Type: record.Float}, 1234.5},
		{"json first output", true, Field{JSON: ".items[].name"}, "Kettle"},
		{"json all outputs", true, Field{JSON: ".items[].id", All: true, Type: record.Int}, []any{int64(1), int64(9007199254740993), int64(3)}},
		{"json all of an array", true, Field{JSON: ".items[0].tags", All: true}, []any{"kitchen", "steel"}},
		{"json object as text", true, Field{JSON: ".items[0].tags"}, `["kitchen","steel"]`},
		{"json null", true, Field{JSON: ".items[2].name"}, nil},
		{"json missing", true, Field{JSON: ".nothing"}, nil},
		{"json run-time error", true, Field{JSON: ".total[]"}, nil},
		{"json computed", true, Field{JSON: ".items | length", Type: record.Int}, int64(3)},
		{"json url resolved against the page", true, Field{JSON: ".next", Type: record.URL}, "http://shop.test/api?page=2"},
		{"json env is empty", true, Field{JSON: "$ENV | length", Type: record.Int}, int64(0)},
		{"regex on json body", true, Field{Regex: `"total":(\d+)`, Type: record.Int}, int64(3)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := htmlPage(listing)
			if c.json {
				p = jsonPage(apiBody)
			}
			got, ok := one(t, p, c.f)
			if c.name == "css text leaves scripts out" {
				if s, _ := got.(string); strings.Contains(s, "var price") || !strings.Contains(s, "Kettle") {
					t.Fatalf("body text %q", got)
				}
				return
			}
			if c.want == nil {
				if ok {
					t.Fatalf("found %#v, want nothing", got)
				}
				return
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %#v, want %#v", got, c.want)
			}
		})
	}
}

// TestEach checks one record per element with fields relative to it, for
// each kind of each.
func TestEach(t *testing.T) {
	htmlFields := []Field{
		{Name: "sku", CSS: ":scope", Attr: "data-sku", Required: true},
		{Name: "name", CSS: ".name"},
		{Name: "link", XPath: ".//a/@href", Type: record.URL},
		{Name: "price", CSS: ".price", Type: record.Float},
		{Name: "tags", CSS: ".tag", All: true},
		{Name: "code", Regex: `data-sku="(\w)`},
	}
	want := []map[string]any{
		{"sku": "A1", "name": "Kettle", "link": "http://shop.test/shop/p/1.html", "price": 1234.5, "tags": []any{"kitchen", "steel"}, "code": "A"},
		{"sku": "B2", "name": "Toaster", "link": "http://shop.test/shop/p/2.html", "price": 12.5, "code": "B"},
	}
	for _, each := range []Selector{{CSS: "li.product"}, {XPath: "//li[@class='product']"}} {
		e := mustCompile(t, Rule{Name: "product", Match: ".", Each: each, Fields: htmlFields, OnInvalid: OnInvalidSkip})
		sets, err := e.Extract(context.Background(), htmlPage(listing))
		if err != nil {
			t.Fatal(err)
		}
		// The third product's price is "free": invalid, skipped.
		recs := sets[0].Records
		if len(recs) != 2 {
			t.Fatalf("each %+v: %d records, want 2", each, len(recs))
		}
		for i, r := range recs {
			if r.Index != i || !reflect.DeepEqual(r.Fields, want[i]) {
				t.Errorf("each %+v: record %d = %d %#v, want %#v", each, i, r.Index, r.Fields, want[i])
			}
		}
	}
	e := mustCompile(t, Rule{Name: "item", Match: ".", Each: Selector{JSON: ".items"}, OnInvalid: OnInvalidKeep, Fields: []Field{
		{Name: "id", JSON: ".id", Type: record.Int, Required: true},
		{Name: "name", JSON: ".name", Required: true},
		{Name: "price", JSON: ".price", Type: record.Float},
		{Name: "tags", JSON: ".tags[]", All: true},
		{Name: "raw", Regex: `"id":(\d+)`, Type: record.Int},
	}})
	sets, err := e.Extract(context.Background(), jsonPage(apiBody))
	if err != nil {
		t.Fatal(err)
	}
	recs := sets[0].Records
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	if got := recs[1].Fields; got["id"] != int64(9007199254740993) || got["raw"] != int64(9007199254740993) || got["price"] != 12.5 {
		t.Errorf("record 1: %#v", got)
	}
	if got := recs[0].Fields["tags"]; !reflect.DeepEqual(got, []any{"kitchen", "steel"}) {
		t.Errorf("record 0 tags: %#v", got)
	}
	if r := recs[2]; r.Status != record.Invalid || r.Index != 2 ||
		!strings.Contains(r.Problem, "field name: required, not found") || !strings.Contains(r.Problem, `field price: "n/a" is not a float`) {
		t.Errorf("record 2: %s %d %q", r.Status, r.Index, r.Problem)
	}
}

// TestOnInvalid checks fail, skip and keep with each reason a record is
// invalid: a required field missing, a value not of its type.
func TestOnInvalid(t *testing.T) {
	fields := []Field{
		{Name: "name", CSS: ".name", Required: true},
		{Name: "price", CSS: ".price", Type: record.Float},
		{Name: "stock", CSS: ".stock", Type: record.Bool},
	}
	for _, c := range []struct {
		onInvalid string
		records   int
		err       string
	}{
		{"", 0, "extract: rule product[2]: field price: \"free\" is not a float"},
		{OnInvalidFail, 0, "extract: rule product[2]: field price: \"free\" is not a float: want"},
		{OnInvalidSkip, 2, ""},
		{OnInvalidKeep, 3, ""},
	} {
		e := mustCompile(t, Rule{Name: "product", Match: ".", Each: Selector{CSS: "li.product"}, Fields: fields, OnInvalid: c.onInvalid})
		sets, err := e.Extract(context.Background(), htmlPage(listing))
		if c.err != "" {
			if !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), c.err[:30]) || sets != nil {
				t.Errorf("on_invalid %q: %v, %v; want ErrInvalid %q", c.onInvalid, sets, err, c.err)
			}
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Index != 2 || !strings.Contains(ie.Problem, `"maybe" is not a bool`) {
				t.Errorf("on_invalid %q: %#v", c.onInvalid, ie)
			}
		} else if err != nil || len(sets[0].Records) != c.records {
			t.Errorf("on_invalid %q: %v, %v; want %d records", c.onInvalid, sets, err, c.records)
		}
		if got := e.Counts()["product"]; got.Pages != 1 || got.Invalid != 1 || got.Records != int64(c.records) {
			t.Errorf("on_invalid %q: counts %+v", c.onInvalid, got)
		}
	}
	// A page-level rule: the message reads as the issue says.
	e := mustCompile(t, Rule{Name: "product", Match: ".", Fields: []Field{{Name: "price", CSS: ".no-price", Required: true}}})
	_, err := e.Extract(context.Background(), htmlPage(listing))
	if err == nil || err.Error() != "extract: rule product: field price: required, not found" {
		t.Errorf("got %v", err)
	}
	// Two invalid records in rules that fail: the first is named, the
	// others counted.
	e = mustCompile(t, Rule{Name: "product", Match: ".", Each: Selector{CSS: "li.product"}, Fields: []Field{{Name: "time", CSS: "time", Required: true}, {Name: "tag", CSS: ".tag", Required: true}}})
	if _, err := e.Extract(context.Background(), htmlPage(listing)); err == nil || !strings.HasSuffix(err.Error(), "(and 1 more invalid records)") {
		t.Errorf("got %v", err)
	}
}

func TestRequiredAndDefault(t *testing.T) {
	e := mustCompile(t, Rule{Name: "r", Match: ".", OnInvalid: OnInvalidKeep, Fields: []Field{
		{Name: "a", CSS: ".none", Default: "7", Type: record.Int},
		{Name: "b", CSS: ".none", Default: "yes", Type: record.Bool},
		{Name: "c", CSS: ".none"},
		{Name: "d", CSS: ".none", Required: true},
		{Name: "e", CSS: ".none", All: true, Required: true},
		{Name: "f", JSON: ".x", Required: true},
		{Name: "g", CSS: "span.blank", Default: "was blank"},
		{Name: "h", CSS: "span.blank", Required: true},
	}})
	_, err := e.Extract(context.Background(), htmlPage(`<p><span class="blank">  </span></p>`))
	if !errors.Is(err, ErrBody) {
		t.Fatalf("a json field on HTML: %v, want ErrBody", err)
	}
	e = mustCompile(t, Rule{Name: "r", Match: ".", OnInvalid: OnInvalidKeep, Fields: []Field{
		{Name: "a", CSS: ".none", Default: "7", Type: record.Int},
		{Name: "b", CSS: ".none", Default: "yes", Type: record.Bool},
		{Name: "c", CSS: ".none"},
		{Name: "d", CSS: ".none", Required: true},
		{Name: "e", CSS: ".none", All: true, Required: true},
		{Name: "g", CSS: "span.blank", Default: "was blank"},
		{Name: "h", CSS: "span.blank", Required: true},
	}})
	sets, err := e.Extract(context.Background(), htmlPage(`<p><span class="blank">  </span></p>`))
	if err != nil {
		t.Fatal(err)
	}
	r := sets[0].Records[0]
	want := map[string]any{"a": int64(7), "b": true, "g": "was blank"}
	if !reflect.DeepEqual(r.Fields, want) {
		t.Errorf("fields %#v, want %#v", r.Fields, want)
	}
	wantProblem := "field d: required, not found; field e: required, not found; field h: required, not found"
	if r.Status != record.Invalid || r.Problem != wantProblem {
		t.Errorf("%s %q, want %q", r.Status, r.Problem, wantProblem)
	}
	// A jq run-time error says why in the problem.
	e = mustCompile(t, Rule{Name: "r", Match: ".", OnInvalid: OnInvalidKeep, Fields: []Field{{Name: "f", JSON: ".total[]", Required: true}}})
	sets, err = e.Extract(context.Background(), jsonPage(apiBody))
	if err != nil || !strings.Contains(sets[0].Records[0].Problem, "required, not found (json: ") {
		t.Errorf("%v %v", sets, err)
	}
}

// TestMatchAndRecord checks which rules run on a page, that a matching rule
// without records still gives its Set, and every column of a record.
func TestMatchAndRecord(t *testing.T) {
	e := mustCompile(t,
		Rule{Name: "list", Match: `/list\.html$`, Each: Selector{CSS: "li.product"}, Fields: []Field{{Name: "name", CSS: ".name"}}},
		Rule{Name: "detail", Match: `/p/\d+\.html$`, Fields: []Field{{Name: "name", CSS: "h1"}}},
		Rule{Name: "none", Match: `(?i)LIST`, Each: Selector{CSS: "table tr"}, Fields: []Field{{Name: "x", CSS: "td"}}},
		Rule{Name: "all", Match: ".", Fields: []Field{{Name: "title", CSS: "title"}}},
	)
	p := htmlPage(listing)
	sets, err := e.Extract(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, s := range sets {
		rules = append(rules, fmt.Sprintf("%s:%d", s.Rule, len(s.Records)))
		if s.Key != p.Key {
			t.Errorf("set key %q", s.Key)
		}
	}
	if got := strings.Join(rules, " "); got != "list:3 none:0 all:1" {
		t.Errorf("sets %s, want list:3 none:0 all:1", got)
	}
	r := sets[0].Records[1]
	want := record.Record{Crawl: "c1", Key: p.Key, URL: p.URL, Rule: "list", Index: 1,
		FetchedAt: p.FetchedAt.UTC(), Status: record.Valid, Labels: []string{"shop"}, Visit: 2,
		Fields: map[string]any{"name": "Toaster"}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("record\n%#v, want\n%#v", r, want)
	}
	if r.FetchedAt.Location() != time.UTC {
		t.Error("FetchedAt not in UTC")
	}
	r.Labels[0] = "changed"
	if p.Labels[0] != "shop" {
		t.Error("a record shares the page's labels")
	}
	counts := e.Counts()
	if counts["list"] != (Count{Pages: 1, Records: 3}) || counts["detail"] != (Count{}) || counts["none"] != (Count{Pages: 1}) {
		t.Errorf("counts %+v", counts)
	}
	// No rule matches: no sets, and the body is not even read.
	p = htmlPage("")
	p.URL, p.Body = "http://shop.test/other", make([]byte, 1<<20)
	e = mustCompile(t, Rule{Name: "list", Match: `/list\.html$`, Fields: []Field{{Name: "name", CSS: ".name"}}})
	if sets, err := e.Extract(context.Background(), p); sets != nil || err != nil {
		t.Errorf("no match: %v %v", sets, err)
	}
}

func TestMainText(t *testing.T) {
	para := strings.Repeat("The kettle boils water quickly and quietly, and it keeps it warm for an hour. ", 12)
	page := `<html><head><title>Kettle review</title></head><body>
<nav><a href="/">Home</a> <a href="/shop/">Shop</a> <a href="/about">About us</a></nav>
<div class="sidebar"><h3>Related</h3><a href="/x">Other kettles</a></div>
<article><h1>The best kettle</h1><p>` + para + `</p><p class="second">` + para + `</p></article>
<footer>Copyright shop.test — all rights reserved</footer></body></html>`
	e := mustCompile(t, Rule{Name: "article", Match: ".", Fields: []Field{
		{Name: "title", CSS: "h1", Required: true},
		{Name: "footer", CSS: "footer"},
		{Name: "body", Text: TextMain, Required: true},
		{Name: "nav", XPath: "count(//nav/a)", Type: record.Int},
	}}, Rule{Name: "second", Match: ".", Each: Selector{CSS: "p"}, Fields: []Field{
		{Name: "body", Text: TextMain}, {Name: "class", CSS: ":scope", Attr: "class"},
	}})
	sets, err := e.Extract(context.Background(), htmlPage(page))
	if err != nil {
		t.Fatal(err)
	}
	f := sets[0].Records[0].Fields
	body, _ := f["body"].(string)
	if !strings.Contains(body, "The kettle boils water") || strings.Contains(body, "Other kettles") || strings.Contains(body, "Copyright") {
		t.Errorf("main text %q", body)
	}
	// The fields around it read the tree as parsed, before readability.
	if f["footer"] != "Copyright shop.test — all rights reserved" || f["nav"] != int64(3) {
		t.Errorf("fields %#v", f)
	}
	recs := sets[1].Records
	if len(recs) != 2 || recs[0].Fields["body"] != body || recs[1].Fields["class"] != "second" {
		t.Errorf("each with text: %#v", recs)
	}
	// A page with no text at all: not found.
	sets, err = mustCompile(t, Rule{Name: "r", Match: ".", OnInvalid: OnInvalidKeep, Fields: []Field{{Name: "body", Text: TextMain, Required: true}}}).
		Extract(context.Background(), htmlPage("<html><body></body></html>"))
	if err != nil || sets[0].Records[0].Status != record.Invalid {
		t.Errorf("empty page: %v %v", sets, err)
	}
}

// TestConcurrent runs one Extractor from many goroutines (with -race:
// the regexes and XPath expressions it keeps must not be shared).
func TestConcurrent(t *testing.T) {
	e := mustCompile(t, Rule{Name: "product", Match: `list\.(?:html|htm)$`, Each: Selector{XPath: "//li[@class='product']"}, OnInvalid: OnInvalidSkip, Fields: []Field{
		{Name: "name", XPath: ".//span[@class='name']"},
		{Name: "code", Regex: `data-sku="(?<value>\w+)"`},
		{Name: "price", CSS: ".price", Type: record.Float},
	}})
	want, err := e.Extract(context.Background(), htmlPage(listing))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 50 {
				got, err := e.Extract(context.Background(), htmlPage(listing))
				if err == nil && !reflect.DeepEqual(got, want) {
					err = fmt.Errorf("got %v, want %v", got, want)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := e.Counts()["product"]; got.Pages != 401 || got.Records != 802 || got.Invalid != 401 {
		t.Errorf("counts %+v", got)
	}
}
