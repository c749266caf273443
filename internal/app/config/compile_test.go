package config

import (
	"strings"
	"testing"
)

// TestSelectorSyntax: every selector language the config takes, in each
// place it is taken (a field, a rule's each, a follow entry), refuses an
// expression that does not compile, at its key and line, through the
// extract package's own compiler: what load accepts, a worker compiles.
func TestSelectorSyntax(t *testing.T) {
	t.Parallel()
	const head = "crawl: x\nscraper:\n  seeds: ['https://a.org/']\n"
	field := func(sel string) string {
		return head + "extract:\n  - name: r\n    match: '.'\n    fields:\n      a: " + sel + "\n"
	}
	each := func(sel, f string) string {
		return head + "extract:\n  - name: r\n    match: '.'\n    each: " + sel + "\n    fields:\n      a: " + f + "\n"
	}
	follow := func(sel string) string { return head + "  follow:\n    - " + sel + "\n" }
	tests := []struct {
		name, yaml string
		path, msg  string
		line       string
	}{
		{"field css", field("{css: 'li[class'}"), "extract[0].fields.a.css", "invalid CSS selector", ":8"},
		{"field css empty group", field("{css: 'h1,'}"), "extract[0].fields.a.css", "invalid CSS selector", ":8"},
		{"field css unknown pseudo", field("{css: 'li:nth-foo(2)'}"), "extract[0].fields.a.css", "invalid CSS selector", ":8"},
		{"field xpath", field("{xpath: '//li['}"), "extract[0].fields.a.xpath", "invalid XPath", ":8"},
		{"field xpath unknown function", field("{xpath: 'foo(//li)'}"), "extract[0].fields.a.xpath", "invalid XPath", ":8"},
		{"field jq syntax", field("{json: '.items[' }"), "extract[0].fields.a.json", "invalid jq expression", ":8"},
		{"field jq gjson path", field("{json: 'items.#.name'}"), "extract[0].fields.a.json", "invalid jq expression", ":8"},
		{"field jq unknown function", field("{json: 'nosuch(.a)'}"), "extract[0].fields.a.json", "invalid jq expression", ":8"},
		{"field regex", field("{regex: '(a'}"), "extract[0].fields.a.regex", "", ":8"},
		{"each css", each("{css: 'li[x'}", "{css: a}"), "extract[0].each.css", "invalid CSS selector", ":7"},
		{"each xpath", each("{xpath: '//li[@a'}", "{xpath: a}"), "extract[0].each.xpath", "invalid XPath", ":7"},
		{"each jq", each("{json: '.items[]['}", "{json: .a}"), "extract[0].each.json", "invalid jq expression", ":7"},
		{"each scope", each("{css: ':scope'}", "{css: a}"), "extract[0].each.css", ":scope", ":7"},
		{"json field in a css each", each("{css: li}", "{json: .a}"), "extract[0].fields.a.json", "the rule's each is css", ":9"},
		{"css field in a json each", each("{json: '.items[]'}", "{css: a}"), "extract[0].fields.a.css", "the rule's each is json", ":9"},
		{"follow css", follow("{css: 'a[href'}"), "scraper.follow[0].css", "invalid CSS selector", ":5"},
		{"follow xpath", follow("{xpath: '//a/@'}"), "scraper.follow[0].xpath", "invalid XPath", ":5"},
		{"follow jq", follow("{json: '.next | '}"), "scraper.follow[0].json", "invalid jq expression", ":5"},
		{"follow scope", follow("{css: ':scope'}"), "scraper.follow[0].css", ":scope", ":5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parse([]byte(tt.yaml), "test.yaml", envOf(nil))
			if err == nil {
				t.Fatalf("accepted:\n%s", tt.yaml)
			}
			fes := fieldErrors(err)
			for _, fe := range fes {
				if fe.Path == tt.path && strings.Contains(fe.Msg, tt.msg) {
					if fe.Pos != "test.yaml"+tt.line {
						t.Errorf("at %q, want test.yaml%s: %v", fe.Pos, tt.line, fe)
					}
					if len(fes) != 1 {
						t.Errorf("want one problem, got %d: %v", len(fes), err)
					}
					return
				}
			}
			t.Errorf("want %s: ...%s...; got:\n%v", tt.path, tt.msg, err)
		})
	}
}

// TestSelectorsThatCompile: the selectors of the shipped kinds load, so
// the syntax check refuses only what does not compile.
func TestSelectorsThatCompile(t *testing.T) {
	t.Parallel()
	src := "crawl: x\nscraper:\n  seeds: ['https://a.org/']\n  follow: [{css: 'a.next'}, {xpath: '//a[@rel=\"next\"]/@href'}, {json: '.next'}]\n" +
		"extract:\n  - name: r\n    match: '.'\n    each: {css: 'li.product'}\n    fields:\n      a: {css: ':scope', attr: data-id}\n      b: {xpath: './/span'}\n" +
		"      c: {regex: 'x(\\d+)'}\n  - name: s\n    match: '.'\n    each: {json: '.items[]'}\n    fields:\n      a: {json: '.name'}\n      b: {json: '.tags', all: true}\n" +
		"  - name: t\n    match: '.'\n    fields:\n      a: {text: main}\n"
	if _, err := parse([]byte(src), "test.yaml", envOf(nil)); err != nil {
		t.Fatal(err)
	}
}
