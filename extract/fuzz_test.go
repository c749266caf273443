package extract

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
)

// fuzzRules is a rule of each kind of field and each, every type, kept
// invalid records and all.
var fuzzRules = []Rule{
	{Name: "html", Match: ".", OnInvalid: OnInvalidKeep, Fields: []Field{
		{Name: "title", CSS: "title, h1"},
		{Name: "price", CSS: ".price", Type: record.Float},
		{Name: "count", XPath: "count(//a)", Type: record.Int},
		{Name: "when", XPath: "//time/@datetime", Type: record.Time},
		{Name: "ok", CSS: ".ok", Type: record.Bool},
		{Name: "links", CSS: "a", Attr: "href", Type: record.URL, All: true},
		{Name: "n", Regex: `n=(?<value>[^&"]+)`, Type: record.Int},
		{Name: "main", Text: TextMain},
	}},
	{Name: "items", Match: ".", OnInvalid: OnInvalidKeep, Each: Selector{CSS: "li"}, Fields: []Field{
		{Name: "self", CSS: ":scope", Attr: "data-id", Type: record.Int},
		{Name: "a", XPath: ".//a/@href", Type: record.URL},
		{Name: "text", Regex: `>([^<]*)<`, All: true},
	}},
	{Name: "api", Match: `json`, OnInvalid: OnInvalidKeep, Each: Selector{JSON: ".items"}, Fields: []Field{
		{Name: "id", JSON: ".id", Type: record.Int, Required: true},
		{Name: "tags", JSON: ".tags", All: true},
		{Name: "at", JSON: ".at", Type: record.Time},
	}},
}

// FuzzExtract runs the fixed rules over any body and content type: never a
// panic, only the package's errors, and every record fit for a sink.
func FuzzExtract(f *testing.F) {
	f.Add([]byte(listing), "text/html", false)
	f.Add([]byte(linksPage), "", false)
	f.Add([]byte(apiBody), "application/json", true)
	f.Add([]byte(`{"items":[{"id":"1,234","tags":"x","at":1700000000}]}`), "", true)
	f.Add([]byte(`<meta charset="shift_jis"><li data-id="1"><a href="x">a</a></li>`), "text/html", false)
	f.Add([]byte("\xff\xfe<\x00h\x001\x00>\x00"), "", false)
	f.Add([]byte(`<time datetime="2026-01-02"></time><span class=price>€1.234,5</span><span class=ok>YES</span>`), "text/html; charset=latin1", false)
	e, err := Compile(fuzzRules, Options{Crawl: "fuzz", Budget: time.Second, MaxNodes: 5000, MaxBody: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	schemas := map[string]map[string]record.Field{}
	for _, s := range e.Schemas() {
		schemas[s.Rule] = map[string]record.Field{}
		for _, fd := range s.Fields {
			schemas[s.Rule][fd.Name] = fd
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, contentType string, json bool) {
		url := "http://fuzz.test/page.html"
		if json {
			url = "http://fuzz.test/api.json"
		}
		p := &saver.Page{Key: url, URL: url, ContentType: contentType, Body: body, Status: 200}
		sets, err := e.Extract(context.Background(), p)
		if err != nil {
			if !errors.Is(err, ErrBody) && !errors.Is(err, ErrBudget) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("an error of no kind: %v", err)
			}
			return
		}
		for _, s := range sets {
			fields := schemas[s.Rule]
			for _, r := range s.Records {
				if (r.Status == record.Valid) != (r.Problem == "") {
					t.Fatalf("status %s with problem %q", r.Status, r.Problem)
				}
				for name, v := range r.Fields {
					fd, ok := fields[name]
					if !ok {
						t.Fatalf("rule %s: field %s not in its schema", s.Rule, name)
					}
					if err := record.Check(fd, v); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	})
}
