package extract

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"

	"github.com/distscrape/distscrape/saver"
)

func encode(t *testing.T, enc encoding.Encoding, s string) []byte {
	t.Helper()
	b, err := enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCharsets decodes bodies by each way a charset is given, and refuses
// the charsets it cannot decode.
func TestCharsets(t *testing.T) {
	ascii := strings.Repeat("<!-- padding -->", 80) // past the 1024 bytes browsers prescan
	cases := []struct {
		name        string
		contentType string
		body        []byte
		want        string // the h1's text; "" when an ErrBody is wanted
		err         string
	}{
		{"ISO-8859-1 in Content-Type", "text/html; charset=ISO-8859-1",
			encode(t, charmap.ISO8859_1, "<h1>Café crème</h1>"), "Café crème", ""},
		{"quoted charset", `text/html; charset="iso-8859-1"`,
			encode(t, charmap.ISO8859_1, "<h1>Café</h1>"), "Café", ""},
		{"Shift_JIS in <meta charset>", "text/html",
			encode(t, japanese.ShiftJIS, `<html><head><meta charset="Shift_JIS"></head><body><h1>日本語のページ</h1>`), "日本語のページ", ""},
		{"windows-1251 in <meta http-equiv>", "",
			encode(t, charmap.Windows1251, `<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251"></head><h1>Привет</h1>`), "Привет", ""},
		{"EUC-JP in Content-Type beats <meta>", "text/html; charset=euc-jp",
			encode(t, japanese.EUCJP, `<meta charset="iso-8859-1"><h1>東京</h1>`), "東京", ""},
		{"UTF-16LE by byte order mark", "text/html",
			encode(t, unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), "<h1>Grüße</h1>"), "Grüße", ""},
		{"UTF-16BE by byte order mark", "",
			encode(t, unicode.UTF16(unicode.BigEndian, unicode.UseBOM), "<h1>Grüße</h1>"), "Grüße", ""},
		{"UTF-8 byte order mark", "text/html", []byte("\xef\xbb\xbf<h1>Grüße</h1>"), "Grüße", ""},
		{"UTF-8 past the first 1024 bytes, no charset", "text/html", []byte(ascii + "<h1>Grüße €</h1>"), "Grüße €", ""},
		{"no charset, not UTF-8: windows-1252", "text/html", []byte("<h1>\x93quoted\x94 \x80</h1>"), "“quoted” €", ""},
		{"invalid UTF-8 declared UTF-8", "text/html; charset=utf-8", []byte("<h1>a\xffb</h1>"), "a\uFFFDb", ""},
		{"bogus charset in Content-Type", "text/html; charset=klingon", []byte("<h1>x</h1>"), "", `charset "klingon" (Content-Type) is not one we know`},
		{"bogus charset in <meta>", "text/html", []byte(`<meta charset="x-bogus-42"><h1>x</h1>`), "", `charset "x-bogus-42" (<meta>) is not one we know`},
		{"bogus charset in <meta http-equiv>", "", []byte(`<meta http-equiv="content-type" content="text/html; charset=nope"><h1>x</h1>`), "", `"nope" (<meta>)`},
		{"charset that decodes to nothing", "text/html; charset=iso-2022-kr", []byte("<h1>x</h1>"), "", "cannot be decoded"},
	}
	e := mustCompile(t, Rule{Name: "r", Match: ".", Fields: []Field{{Name: "h", CSS: "h1"}}})
	for _, c := range cases {
		p := htmlPage("")
		p.ContentType, p.Body = c.contentType, c.body
		sets, err := e.Extract(context.Background(), p)
		if c.err != "" {
			if !errors.Is(err, ErrBody) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want ErrBody with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := sets[0].Records[0].Fields["h"]; got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// A JSON body in another charset than UTF-8.
	p := jsonPage("")
	p.ContentType, p.Body = "application/json; charset=iso-8859-1", encode(t, charmap.ISO8859_1, `{"name":"Café"}`)
	sets, err := mustCompile(t, Rule{Name: "r", Match: ".", Fields: []Field{{Name: "n", JSON: ".name"}}}).Extract(context.Background(), p)
	if err != nil || sets[0].Records[0].Fields["n"] != "Café" {
		t.Errorf("JSON in ISO-8859-1: %v %v", sets, err)
	}
	// JSON without a charset is UTF-8 (RFC 8259), whatever its type says:
	// an invalid byte becomes U+FFFD (as encoding/json makes it), never
	// windows-1252's letter; a NUL escaped in a string too.
	for _, ct := range []string{"application/json", "application/ld+json", "text/plain", "", "application/json; charset=utf-8"} {
		for _, body := range [][]byte{[]byte("{\"name\":\"Caf\xe9 \x80\"}"), []byte("\xef\xbb\xbf{\"name\":\"Caf\xe9 \x80\"}")} {
			p := jsonPage("")
			p.ContentType, p.Body = ct, body
			sets, err := mustCompile(t, Rule{Name: "r", Match: ".", Fields: []Field{{Name: "n", JSON: ".name"}}}).Extract(context.Background(), p)
			if err != nil || sets[0].Records[0].Fields["n"] != "Caf\uFFFD \uFFFD" {
				t.Errorf("JSON %q with invalid UTF-8, type %q: %v %v, want U+FFFD for each bad byte", body, ct, sets, err)
			}
		}
	}
	p = jsonPage("")
	p.ContentType, p.Body = "application/json", []byte(`{"name":"a\u0000b"}`)
	sets, err = mustCompile(t, Rule{Name: "r", Match: ".", Fields: []Field{{Name: "n", JSON: ".name"}}}).Extract(context.Background(), p)
	if err != nil || sets[0].Records[0].Fields["n"] != "a\uFFFDb" {
		t.Errorf("JSON with an escaped NUL: %v %v, want U+FFFD", sets, err)
	}
}

// TestBodyKinds gives each kind of field bodies of the wrong kind.
func TestBodyKinds(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")
	cases := []struct {
		name        string
		field       Field
		contentType string
		body        string
		err         string // "" when it must be read
	}{
		{"png for css", Field{CSS: "h1"}, "image/png", string(png), "body is image/png, not HTML"},
		{"png without a type for xpath", Field{XPath: "//h1"}, "", string(png), "body is image/png, not HTML"},
		{"json for css", Field{CSS: "h1"}, "application/json", `{"a":1}`, "body is application/json, not HTML"},
		{"json without a type for text", Field{Text: "main"}, "", `{"a":1}`, "body is text/plain, not HTML"},
		{"pdf for css", Field{CSS: "h1"}, "application/pdf", "%PDF-1.4", "body is application/pdf, not HTML"},
		{"octet-stream for css", Field{CSS: "h1"}, "application/octet-stream", "<h1>x</h1>", "not HTML"},
		{"html for json", Field{JSON: ".a"}, "text/html", "<h1>x</h1>", "body (text/html) is not JSON"},
		{"empty body for json", Field{JSON: ".a"}, "application/json", "", "is not JSON"},
		{"two JSON values", Field{JSON: ".a"}, "application/json", `{"a":1} {"a":2}`, "not one JSON value"},
		{"truncated JSON", Field{JSON: ".a"}, "application/json", `{"a":[1,2`, "is not JSON"},
		{"png for json", Field{JSON: ".a"}, "image/png", string(png), "body (image/png) is not JSON"},
		{"html as text/plain", Field{CSS: "h1"}, "text/plain", "\n  <h1>x</h1>", ""},
		{"html without a type", Field{CSS: "h1"}, "", "<!doctype html><h1>x</h1>", ""},
		{"xhtml", Field{CSS: "h1"}, "application/xhtml+xml", "<h1>x</h1>", ""},
		{"json as text/plain", Field{JSON: ".a"}, "text/plain", `{"a":"x"}`, ""},
		{"json as javascript", Field{JSON: ".a"}, "application/javascript", `{"a":"x"}`, ""},
		{"regex on anything", Field{Regex: "PNG"}, "image/png", string(png), ""},
	}
	for _, c := range cases {
		c.field.Name = "v"
		e := mustCompile(t, Rule{Name: "r", Match: ".", Fields: []Field{c.field}})
		p := htmlPage("")
		p.ContentType, p.Body = c.contentType, []byte(c.body)
		sets, err := e.Extract(context.Background(), p)
		if c.err == "" {
			if err != nil || len(sets[0].Records[0].Fields) != 1 {
				t.Errorf("%s: %v %v", c.name, sets, err)
			}
			continue
		}
		if !errors.Is(err, ErrBody) || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want ErrBody with %q", c.name, err, c.err)
		}
	}
}

// allocated runs fn and returns the bytes it allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestMaxBody(t *testing.T) {
	e := mustCompile(t, Rule{Name: "r", Match: ".", Fields: []Field{{Name: "h", CSS: "h1"}}})
	big := htmlPage("")
	big.Body = bytes.Repeat([]byte("<p>0123456789</p>\n"), 50<<20/18) // 50 MB
	var err error
	n := allocated(func() { _, err = e.Extract(context.Background(), big) })
	if !errors.Is(err, ErrBody) || !strings.Contains(err.Error(), "larger than the limit of 16777216 (max_body)") {
		t.Fatalf("50 MB page: %v", err)
	}
	if n > 1<<20 {
		t.Errorf("refusing a 50 MB page allocated %d bytes", n)
	}
	// The limit is the body's size exactly.
	e, _ = Compile([]Rule{{Name: "r", Match: ".", Fields: []Field{{Name: "h", CSS: "h1"}}}}, Options{MaxBody: 100})
	p := htmlPage("<h1>x</h1>" + strings.Repeat(" ", 90))
	if _, err := e.Extract(context.Background(), p); err != nil {
		t.Errorf("100 bytes: %v", err)
	}
	p.Body = append(p.Body, ' ')
	if _, err := e.Extract(context.Background(), p); !errors.Is(err, ErrBody) {
		t.Errorf("101 bytes: %v", err)
	}
}

// TestMaxNodes: a page of a million matching elements is refused before
// its tree is built, and a selector yielding more values than MaxNodes is
// refused, whatever its kind.
func TestMaxNodes(t *testing.T) {
	e := mustCompile(t, Rule{Name: "r", Match: ".", Fields: []Field{{Name: "li", CSS: "li", All: true}}})
	p := htmlPage("<ul>" + strings.Repeat("<li>x</li>", 1_000_000) + "</ul>")
	var err error
	n := allocated(func() { _, err = e.Extract(context.Background(), p) })
	if !errors.Is(err, ErrBody) || !strings.Contains(err.Error(), "more than 100000 elements (max_nodes)") {
		t.Fatalf("10^6 elements: %v", err)
	}
	// The body's text (10 MB) and the tokenizer's buffers; a tree would
	// take over 200 MB.
	if n > 40<<20 {
		t.Errorf("refusing 10^6 elements allocated %d MB", n>>20)
	}
	// Just under the limit: read.
	small := htmlPage("<ul>" + strings.Repeat("<li>xx</li>", 990) + "</ul>")
	for _, c := range []struct {
		name string
		f    Field
		ok   bool
	}{
		{"css under the limit", Field{CSS: "li", All: true}, true},
		{"xpath over the limit", Field{XPath: "//li | //li/text()", All: true}, false},
		{"regex over the limit", Field{Regex: "x", All: true}, false},
		{"jq over the limit", Field{JSON: "range(5000)", All: true}, false},
		{"each over the limit", Field{Regex: "(x)"}, false},
	} {
		c.f.Name = "v"
		r := Rule{Name: "r", Match: ".", Fields: []Field{c.f}}
		pg := small
		if c.f.JSON != "" {
			pg = jsonPage(`{}`)
		}
		if c.name == "each over the limit" {
			r.Each = Selector{XPath: "//li | //li/text()"}
		}
		e, err := Compile([]Rule{r}, Options{MaxNodes: 1000})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Extract(context.Background(), pg)
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.ok && (!errors.Is(err, ErrBody) || !strings.Contains(err.Error(), "yields more than 1000 values (max_nodes)")):
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestBudget: a regex or jq expression that would run for ever ends with
// the page's budget, naming what ran out; a cancelled context wins.
func TestBudget(t *testing.T) {
	evil := htmlPage("<p>" + strings.Repeat("a", 40) + "!</p>")
	for _, c := range []struct {
		name string
		r    Rule
		p    *saver.Page
	}{
		{"catastrophic regex field", Rule{Name: "r", Match: ".", Fields: []Field{{Name: "v", Regex: `(a+)+$`}}}, evil},
		{"catastrophic match", Rule{Name: "r", Match: `(x+x+)+y`, Fields: []Field{{Name: "v", CSS: "p"}}},
			&saver.Page{URL: "http://shop.test/" + strings.Repeat("x", 40), ContentType: "text/html", Body: []byte("<p>")}},
		{"endless jq", Rule{Name: "r", Match: ".", Fields: []Field{{Name: "v", JSON: "last(range(1e15))"}}}, jsonPage("{}")},
	} {
		e, err := Compile([]Rule{c.r}, Options{Budget: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Extract(context.Background(), c.p)
		if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "ran out of the page's budget of 50ms") || !strings.Contains(err.Error(), "rule r") {
			t.Errorf("%s: %v", c.name, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := e.Extract(ctx, c.p); !errors.Is(err, context.Canceled) {
			t.Errorf("%s, cancelled: %v", c.name, err)
		}
	}
}

// TestBudgetAfterParse: the budget counts the selectors, not the parse,
// which cannot be cut short and which CPU load stretches: a page whose
// JSON or HTML takes longer to parse than the whole budget still has its
// budget for a quick selector.
func TestBudgetAfterParse(t *testing.T) {
	const budget = 2 * time.Millisecond
	bigJSON := `{"name":"x","pad":[` + strings.Repeat(`{"a":[1,2,3,"abcdefgh"]},`, 50_000) + `0]}`
	bigHTML := "<title>x</title>" + strings.Repeat("<div><p>abcdefgh</p></div>", 40_000)
	for _, c := range []struct {
		name string
		r    Rule
		p    *saver.Page
	}{
		{"json", Rule{Name: "r", Match: ".", Fields: []Field{{Name: "v", JSON: ".name"}}}, jsonPage(bigJSON)},
		{"html", Rule{Name: "r", Match: ".", Fields: []Field{{Name: "v", XPath: "/html/head/title"}}}, htmlPage(bigHTML)},
	} {
		e, err := Compile([]Rule{c.r}, Options{Budget: budget, MaxBody: 64 << 20, MaxNodes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		sets, err := e.Extract(context.Background(), c.p)
		took := time.Since(start)
		if took < 5*budget {
			t.Fatalf("%s: the page took %v, not several budgets: it proves nothing", c.name, took)
		}
		if err != nil || sets[0].Records[0].Fields["v"] != "x" {
			t.Errorf("%s: %v %v after %v, want the value: the parse spent the budget", c.name, sets, err, took)
		}
	}
}
