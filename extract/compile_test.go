package extract

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/record"
)

// TestCompileErrors gives Compile one rule set with every kind of mistake
// and checks that one call reports each, located by rule, field and key.
func TestCompileErrors(t *testing.T) {
	type want struct {
		rule, field int
		key, text   string
	}
	cases := []struct {
		name string
		rule Rule
		want []want // field -1: the rule; rule index is the case's
	}{
		{"bad css", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", CSS: "div[["}}},
			[]want{{field: 0, key: "css", text: "invalid CSS selector"}}},
		{"css pseudo-element", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", CSS: "p::before"}}},
			[]want{{field: 0, key: "css", text: "invalid CSS selector"}}},
		{"bad xpath", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", XPath: "//div[@"}}},
			[]want{{field: 0, key: "xpath", text: "invalid XPath"}}},
		{"xpath unknown function", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", XPath: "nosuch(//a)"}}},
			[]want{{field: 0, key: "xpath", text: "invalid XPath"}}},
		// Text after a complete expression, which the XPath library ignores.
		{"xpath trailing text", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "v", XPath: "//li)"}, {Name: "w", XPath: "//li]"},
			{Name: "x", XPath: "//li[1]]"}, {Name: "y", XPath: "//a/@href )"}, {Name: "z", XPath: "//li foo"}, {Name: "u", XPath: "//li,"}}},
			[]want{{0, 0, "xpath", "unmatched ')'"}, {0, 1, "xpath", "unmatched ']'"}, {0, 2, "xpath", "unmatched ']'"},
				{0, 3, "xpath", "unmatched ')'"}, {0, 4, "xpath", "unexpected text after"}, {0, 5, "xpath", "unexpected text after"}}},
		{"bad jq syntax", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", JSON: ".items["}}},
			[]want{{field: 0, key: "json", text: "invalid jq expression"}}},
		{"jq unknown function", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", JSON: ".items | nosuch"}}},
			[]want{{field: 0, key: "json", text: "nosuch"}}},
		{"bad regex", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", Regex: "a(b"}}},
			[]want{{field: 0, key: "regex", text: "invalid regex"}}},
		{"no match", Rule{Name: "a", Fields: []Field{{Name: "x", CSS: "a"}}},
			[]want{{field: -1, key: "match", text: "required"}}},
		{"system table names", Rule{Name: "pg_type", Match: ".", Fields: []Field{{Name: "x", CSS: "a"}}},
			[]want{{field: -1, key: "name", text: "would start with pg_"}}},
		{"rule name no SQL sink can version", Rule{Name: strings.Repeat("a", 54), Match: ".", Fields: []Field{{Name: "x", CSS: "a"}}},
			[]want{{field: -1, key: "name", text: "at most 53 characters"}}},
		{"no rule name", Rule{Match: ".", Fields: []Field{{Name: "x", CSS: "a"}}},
			[]want{{field: -1, key: "name", text: "required"}}},
		{"bad match", Rule{Name: "a", Match: "[", Fields: []Field{{Name: "x", CSS: "a"}}},
			[]want{{field: -1, key: "match", text: "invalid regex"}}},
		{"bad type", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", CSS: "a", Type: "integer"}}},
			[]want{{field: 0, key: "type", text: `unknown value "integer" (want string, int, float, bool, time or url)`}}},
		{"bad default", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", CSS: "a", Type: record.Int, Default: "many"}}},
			[]want{{field: 0, key: "default", text: `"many" is not an int`}}},
		{"relative url default", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", CSS: "a", Type: record.URL, Default: "/home"}}},
			[]want{{field: 0, key: "default", text: "not absolute"}}},
		{"default with all", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", CSS: "a", All: true, Default: "z"}}},
			[]want{{field: 0, key: "default", text: "all takes no default"}}},
		{"default with required", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", CSS: "a", Required: true, Default: "z"}}},
			[]want{{field: 0, key: "default", text: "never missing"}}},
		{"duplicate field", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", CSS: "a"}, {Name: "x", CSS: "b"}}},
			[]want{{field: 1, key: "name", text: "field 0 already"}}},
		{"reserved names", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "key", CSS: "a"}, {Name: "idx", CSS: "a"}, {Name: "fetched_at", CSS: "a"}}},
			[]want{{field: 0, key: "name", text: "every record has"}, {field: 1, key: "name", text: "every record has"}, {field: 2, key: "name", text: "every record has"}}},
		{"invalid field names", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "Price", CSS: "a"}, {Name: "1st", CSS: "a"}, {Name: "a-b", CSS: "a"}, {Name: "", CSS: "a"}, {Name: strings.Repeat("x", 64), CSS: "a"}}},
			[]want{{0, 0, "name", "not a valid name"}, {0, 1, "name", "not a valid name"}, {0, 2, "name", "not a valid name"}, {0, 3, "name", "not a valid name"}, {0, 4, "name", "not a valid name"}}},
		{"invalid rule name", Rule{Name: "Products", Match: ".", Fields: []Field{{Name: "x", CSS: "a"}}},
			[]want{{field: -1, key: "name", text: "not a valid name"}}},
		{"two selectors", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", CSS: "a", XPath: "//a"}, {Name: "y", JSON: ".a", Regex: "a"}, {Name: "z", Regex: "a", Text: "main"}}},
			[]want{{0, 0, "", "css and xpath given together"}, {0, 1, "", "json and regex given together"}, {0, 2, "", "regex and text given together"}}},
		{"no selector", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", Attr: "href"}, {Name: "y"}}},
			[]want{{0, 0, "", "no selector"}, {0, 1, "", "no selector"}}},
		{"attr without css or xpath", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", JSON: ".a", Attr: "href"}, {Name: "y", Regex: "a", Attr: "href"}, {Name: "z", Text: "main", Attr: "href"}}},
			[]want{{0, 0, "attr", "not with json"}, {0, 1, "attr", "not with regex"}, {0, 2, "attr", "not with text"}}},
		{"text other than main", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", Text: "all"}, {Name: "y", Text: "Main"}}},
			[]want{{0, 0, "text", `unknown value "all" (want main`}, {0, 1, "text", `unknown value "Main" (want main`}}},
		{"text with all", Rule{Name: "a", Match: ".", Fields: []Field{{Name: "x", Text: "main", All: true}}},
			[]want{{field: 0, key: "all", text: "one value"}}},
		{"bad on_invalid", Rule{Name: "a", Match: ".", OnInvalid: "drop", Fields: []Field{{Name: "x", CSS: "a"}}},
			[]want{{field: -1, key: "on_invalid", text: "want fail, skip or keep"}}},
		{"no fields", Rule{Name: "a", Match: "."},
			[]want{{field: -1, key: "fields", text: "at least one field"}}},
		{"each with two selectors", Rule{Name: "a", Match: ".", Each: Selector{CSS: "li", JSON: ".a"}, Fields: []Field{{Name: "x", Regex: "a"}}},
			[]want{{field: -1, key: "each", text: "exactly one"}}},
		{"bad each css", Rule{Name: "a", Match: ".", Each: Selector{CSS: "li["}, Fields: []Field{{Name: "x", Regex: "a"}}},
			[]want{{field: -1, key: "each.css", text: "invalid CSS"}}},
		{"each :scope", Rule{Name: "a", Match: ".", Each: Selector{CSS: ":scope"}, Fields: []Field{{Name: "x", Regex: "a"}}},
			[]want{{field: -1, key: "each.css", text: ":scope"}}},
		{"bad each jq", Rule{Name: "a", Match: ".", Each: Selector{JSON: ".["}, Fields: []Field{{Name: "x", Regex: "a"}}},
			[]want{{field: -1, key: "each.json", text: "invalid jq"}}},
		{"json field in css each", Rule{Name: "a", Match: ".", Each: Selector{CSS: "li"}, Fields: []Field{{Name: "x", JSON: ".a"}}},
			[]want{{field: 0, key: "json", text: "each is css"}}},
		{"css field in json each", Rule{Name: "a", Match: ".", Each: Selector{JSON: ".items[]"}, Fields: []Field{{Name: "x", CSS: "a"}, {Name: "y", XPath: "//a"}}},
			[]want{{0, 0, "css", "each is json"}, {0, 1, "xpath", "each is json"}}},
	}
	var rules []Rule
	var wants []want
	var names []string
	for i, c := range cases {
		if c.rule.Name == "a" { // a name of its own, or each would be a duplicate
			c.rule.Name = fmt.Sprintf("r%d", i)
		}
		rules = append(rules, c.rule)
		names = append(names, c.name)
		for _, w := range c.want {
			w.rule = i
			wants = append(wants, w)
		}
	}
	// A rule name used twice, after all the others.
	rules = append(rules, Rule{Name: "dup", Match: ".", Fields: []Field{{Name: "x", CSS: "a"}}}, Rule{Name: "dup", Match: ".", Fields: []Field{{Name: "x", CSS: "a"}}})
	wants = append(wants, want{len(rules) - 1, -1, "name", "also the name of extract[" + fmt.Sprint(len(rules)-2) + "]"})
	names = append(names, "rule name twice", "rule name twice")

	_, err := Compile(rules, Options{})
	if err == nil {
		t.Fatal("Compile accepted bad rules")
	}
	var got []*Error
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *Error
		if !errors.As(e, &ce) {
			t.Fatalf("%v is not an *Error", e)
		}
		got = append(got, ce)
	}
	for _, w := range wants {
		i := slices.IndexFunc(got, func(e *Error) bool {
			return e.Rule == w.rule && e.Field == w.field && e.Key == w.key && strings.Contains(e.Err.Error(), w.text)
		})
		if i < 0 {
			t.Errorf("case %q: no error at rule %d field %d key %q with %q", names[w.rule], w.rule, w.field, w.key, w.text)
			continue
		}
		got = slices.Delete(got, i, i+1)
	}
	for _, e := range got {
		t.Errorf("unexpected error: %v", e)
	}
}

func TestErrorMessage(t *testing.T) {
	for _, c := range []struct {
		err  *Error
		want string
	}{
		{&Error{Rule: 2, Field: 1, Key: "css", Err: errors.New("bad")}, "extract[2].fields[1].css: bad"},
		{&Error{Rule: 0, Field: -1, Key: "match", Err: errors.New("bad")}, "extract[0].match: bad"},
		{&Error{Rule: 1, Field: 3, Err: errors.New("bad")}, "extract[1].fields[3]: bad"},
		{&Error{Rule: 1, Field: -1, Key: "json", Follow: true, Err: errors.New("bad")}, "follow[1].json: bad"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%#v: %q, want %q", c.err, got, c.want)
		}
	}
}

func TestSchemas(t *testing.T) {
	e, err := Compile([]Rule{
		{Name: "product", Match: ".", Fields: []Field{{Name: "title", CSS: "h1"}, {Name: "price", CSS: ".p", Type: record.Float}, {Name: "tags", CSS: "li", All: true}}},
		{Name: "api", Match: ".", Fields: []Field{{Name: "id", JSON: ".id", Type: record.Int, Required: true}}},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []record.Schema{
		{Rule: "product", Fields: []record.Field{{Name: "title", Type: record.String}, {Name: "price", Type: record.Float}, {Name: "tags", Type: record.String, All: true}}},
		{Rule: "api", Fields: []record.Field{{Name: "id", Type: record.Int}}},
	}
	got := e.Schemas()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Schemas() = %v, want %v", got, want)
	}
	got[0].Fields[0].Name = "changed" // a copy: the caller cannot change the extractor
	if e.Schemas()[0].Fields[0].Name != "title" {
		t.Fatal("Schemas returned the extractor's own slice")
	}
}
