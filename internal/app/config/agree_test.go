package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/extract"
)

// TestExtractOneDefinition: the config's validation and extract.Compile,
// which try and extract --from call on the same rules, accept and refuse
// the same extract sections, and the config reports each refusal at the
// key the library names. Each case is an extract section of one class:
// selector kinds and their pairs, attr with each kind, each with each
// field kind, match, types and defaults, process steps, names.
func TestExtractOneDefinition(t *testing.T) {
	t.Parallel()
	// field is one rule with one field a; each is one with an each too.
	field := func(f string) string { return "[{name: r, match: '.', fields: {a: " + f + "}}]" }
	each := func(e, f string) string { return "[{name: r, match: '.', each: " + e + ", fields: {a: " + f + "}}]" }
	type tc struct {
		name, extract string
		path          string // under extract[0]; "" = accepted
	}
	cases := []tc{
		// Rules.
		{"good", field("{css: h1}"), ""},
		{"name missing", "[{match: '.', fields: {a: {css: h1}}}]", "name"},
		{"name upper case", "[{name: R, match: '.', fields: {a: {css: h1}}}]", "name"},
		{"name with a dash", "[{name: a-b, match: '.', fields: {a: {css: h1}}}]", "name"},
		{"name too long", "[{name: " + strings.Repeat("a", 64) + ", match: '.', fields: {a: {css: h1}}}]", "name"},
		{"name of a system table", "[{name: pg_class, match: '.', fields: {a: {css: h1}}}]", "name"},
		{"name reserved word", "[{name: order, match: '.', fields: {a: {css: h1}}}]", ""},
		{"match missing", "[{name: r, fields: {a: {css: h1}}}]", "match"},
		{"match empty", "[{name: r, match: '', fields: {a: {css: h1}}}]", "match"},
		{"match unclosed group", "[{name: r, match: '(', fields: {a: {css: h1}}}]", "match"},
		{"match unclosed set", "[{name: r, match: '[a', fields: {a: {css: h1}}}]", "match"},
		{"match bad group", "[{name: r, match: '(?<n', fields: {a: {css: h1}}}]", "match"},
		{"on_invalid skip", "[{name: r, match: '.', on_invalid: skip, fields: {a: {css: h1}}}]", ""},
		{"on_invalid unknown", "[{name: r, match: '.', on_invalid: drop, fields: {a: {css: h1}}}]", "on_invalid"},
		{"fields missing", "[{name: r, match: '.'}]", "fields"},
		{"fields empty", "[{name: r, match: '.', fields: {}}]", "fields"},
		// A rule's each: one selector of three kinds, never two.
		{"each css", each("{css: li}", "{css: a}"), ""},
		{"each xpath", each("{xpath: //li}", "{css: a}"), ""},
		{"each json", each("{json: '.items[]'}", "{json: .a}"), ""},
		{"each css and xpath", each("{css: li, xpath: //li}", "{regex: a}"), "each"},
		{"each css and json", each("{css: li, json: .a}", "{regex: a}"), "each"},
		{"each xpath and json", each("{xpath: //li, json: .a}", "{regex: a}"), "each"},
		{"each all three", each("{css: li, xpath: //li, json: .a}", "{regex: a}"), "each"},
		{"each bad css", each("{css: 'li['}", "{regex: a}"), "each.css"},
		{"each bad xpath", each("{xpath: '//li['}", "{regex: a}"), "each.xpath"},
		{"each bad jq", each("{json: '.['}", "{regex: a}"), "each.json"},
		{"each :scope", each("{css: ':scope'}", "{regex: a}"), "each.css"},
	}
	// A field of each kind alone, then every pair of kinds, then none.
	kinds := []struct{ key, val string }{{"css", "h1"}, {"xpath", "//h1"}, {"json", ".a"}, {"regex", "a"}, {"text", "main"}}
	for i, k := range kinds {
		cases = append(cases, tc{"field " + k.key, field("{" + k.key + ": '" + k.val + "'}"), ""})
		for _, l := range kinds[i+1:] {
			cases = append(cases, tc{"field " + k.key + " and " + l.key,
				field("{" + k.key + ": '" + k.val + "', " + l.key + ": '" + l.val + "'}"), "fields.a"})
		}
		// attr reads an attribute of the elements css or xpath select.
		path := "fields.a.attr"
		if k.key == "css" || k.key == "xpath" {
			path = ""
		}
		cases = append(cases, tc{"attr with " + k.key, field("{" + k.key + ": '" + k.val + "', attr: href}"), path})
		// In an each, a field's kind fits the each's.
		for _, e := range []struct{ key, val string }{{"css", "li"}, {"xpath", "//li"}, {"json", ".items[]"}} {
			path := ""
			switch {
			case e.key == "json" && (k.key == "css" || k.key == "xpath"),
				e.key != "json" && k.key == "json":
				path = "fields.a." + k.key
			}
			cases = append(cases, tc{"each " + e.key + " field " + k.key, each("{"+e.key+": '"+e.val+"'}", "{"+k.key+": '"+k.val+"'}"), path})
		}
	}
	cases = append(cases,
		tc{"field no selector", field("{type: int}"), "fields.a"},
		tc{"attr alone", field("{attr: href}"), "fields.a"},
		tc{"field bad regex", field("{regex: '(?<n'}"), "fields.a.regex"},
		tc{"field text not main", field("{text: all}"), "fields.a.text"},
		tc{"field text Main", field("{text: Main}"), "fields.a.text"},
		tc{"field text with all", field("{text: main, all: true}"), "fields.a.all"},
		tc{"field bad css", field("{css: 'h1['}"), "fields.a.css"},
		tc{"field bad xpath", field("{xpath: '//h1)'}"), "fields.a.xpath"},
		tc{"field bad jq", field("{json: '.a['}"), "fields.a.json"},
		// Field names.
		tc{"field name upper case", "[{name: r, match: '.', fields: {A: {css: h1}}}]", "fields.A"},
		tc{"field name starts with a digit", "[{name: r, match: '.', fields: {1st: {css: h1}}}]", "fields.1st"},
		tc{"field name key", "[{name: r, match: '.', fields: {key: {css: h1}}}]", "fields.key"},
		tc{"field name idx", "[{name: r, match: '.', fields: {idx: {css: h1}}}]", "fields.idx"},
		tc{"field name xmin", "[{name: r, match: '.', fields: {xmin: {css: h1}}}]", "fields.xmin"},
		tc{"field name rowid", "[{name: r, match: '.', fields: {rowid: {css: h1}}}]", "fields.rowid"},
		// Types and defaults.
		tc{"type unknown", field("{css: h1, type: integer}"), "fields.a.type"},
		tc{"required with default", field("{css: h1, required: true, default: x}"), "fields.a.default"},
		tc{"all with default", field("{css: h1, all: true, default: x}"), "fields.a.default"},
		tc{"keep_spaces int", field("{css: h1, type: int, keep_spaces: true}"), "fields.a.keep_spaces"},
		tc{"keep_spaces string", field("{css: h1, keep_spaces: true}"), ""},
	)
	for _, d := range []struct{ typ, good, bad string }{
		{"string", "none", ""}, {"int", "0", "x"}, {"float", "1.5", "many"}, {"bool", "false", "maybe"},
		{"time", "2024-01-02T03:04:05Z", "yesterday"}, {"url", "https://a.org/", "/x"},
		// Read as a value found on a page would be.
		{"int", "1.234", ""}, {"float", "1,5", ""}, {"bool", "yes", ""}, {"time", "2024-01-02", ""},
	} {
		cases = append(cases, tc{d.typ + " default " + d.good, field("{css: h1, type: " + d.typ + ", default: '" + d.good + "'}"), ""})
		if d.bad != "" {
			cases = append(cases, tc{d.typ + " default " + d.bad, field("{css: h1, type: " + d.typ + ", default: '" + d.bad + "'}"), "fields.a.default"})
		}
	}
	cases = append(cases,
		// Process steps.
		tc{"process words", field("{css: h1, process: [squash, lower, upper]}"), ""},
		tc{"process split with all", field("{css: h1, all: true, process: [{split: ','}]}"), ""},
		tc{"process split then join", field("{css: h1, process: [{split: ','}, {join: ';'}]}"), ""},
		tc{"process split without all", field("{css: h1, process: [{split: ','}]}"), "fields.a.process"},
		tc{"process count int", field("{css: li, type: int, process: [count]}"), ""},
		tc{"process count string", field("{css: li, process: [count]}"), "fields.a.process[0]"},
		tc{"process two in a step", field("{css: h1, process: [{split: ',', join: ';'}]}"), "fields.a.process[0]"},
		tc{"process empty step", field("{css: h1, process: [{}]}"), "fields.a.process[0]"},
		tc{"process second step bad", field("{css: h1, process: [lower, {decimal: ';'}]}"), "fields.a.process[1]"},
		tc{"process replace bad regex", field("{css: h1, process: [{replace: {regex: '(', with: x}}]}"), "fields.a.process[0]"},
		tc{"process replace no regex", field("{css: h1, process: [{replace: {with: x}}]}"), "fields.a.process[0]"},
		tc{"process decimal string", field("{css: h1, process: [{decimal: ','}]}"), "fields.a.process[0]"},
		tc{"process decimal float", field("{css: h1, type: float, process: [{decimal: ','}]}"), ""},
		// Two rules.
		tc{"rule names twice", "[{name: r, match: '.', fields: {a: {css: h1}}}, {name: r, match: '.', fields: {a: {css: h1}}}]", "-1.name"},
	)
	const head = "crawl: x\nscraper: {seeds: ['https://a.org/']}\nextract: "
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := head + c.extract + "\n"
			want := ""
			if c.path != "" {
				want = "extract[0]." + c.path
				if rest, ok := strings.CutPrefix(c.path, "-1."); ok {
					want = "extract[1]." + rest
				}
			}
			// The library, on the rules as decoded.
			dec, p := decode([]byte(src), "t.yaml", envOf(nil))
			if len(p.list) > 0 {
				t.Fatalf("the case does not decode: %v", p.err())
			}
			dec.ApplyDefaults()
			_, libErr := extract.Compile(dec.ExtractRules(), extract.Options{})
			libPaths := extractPaths(dec, libErr)
			// The config.
			_, cfgErr := parse([]byte(src), "t.yaml", envOf(nil))
			var cfgPaths []string
			for _, fe := range fieldErrors(cfgErr) {
				cfgPaths = append(cfgPaths, fe.Path)
				if !strings.HasPrefix(fe.Pos, "t.yaml:") {
					t.Errorf("no line: %v", fe)
				}
			}
			switch {
			case (libErr == nil) != (cfgErr == nil):
				t.Errorf("extract.Compile: %v\nconfig: %v", libErr, cfgErr)
			case want == "" && libErr != nil:
				t.Errorf("both refuse, want both to accept:\n%v", cfgErr)
			case want != "" && libErr == nil:
				t.Errorf("both accept, want %s refused", want)
			case want != "" && (!slices.Contains(libPaths, want) || !slices.Contains(cfgPaths, want)):
				t.Errorf("want both at %s; extract.Compile at %v, config at %v:\n%v", want, libPaths, cfgPaths, cfgErr)
			case !slices.Equal(sortedSet(libPaths), sortedSet(cfgPaths)):
				t.Errorf("extract.Compile at %v, config at %v:\n%v", libPaths, cfgPaths, cfgErr)
			}
		})
	}
}

func sortedSet(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// extractPaths are the key paths of the *extract.Error in err, by the
// rules of c: a field's own name is its key.
func extractPaths(c *Config, err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ee *extract.Error
		if !errors.As(e, &ee) {
			out = append(out, "?")
			continue
		}
		path := fmt.Sprintf("extract[%d]", ee.Rule)
		if ee.Field >= 0 {
			path += ".fields." + c.Extract[ee.Rule].Fields[ee.Field].Name
		}
		if ee.Key != "" && !(ee.Field >= 0 && ee.Key == "name") {
			path += "." + ee.Key
		}
		out = append(out, path)
	}
	return out
}

// TestFollowOneDefinition: the same for scraper.follow, which
// extract.CompileFollow defines: each selector kind alone, every pair,
// none, attr with each kind, and kind.
func TestFollowOneDefinition(t *testing.T) {
	t.Parallel()
	type tc struct{ name, follow, path string } // path under scraper.follow[0]; "-" = accepted
	kinds := []struct{ key, val string }{{"css", "a"}, {"xpath", "//a"}, {"json", ".next"}}
	cases := []tc{{"none", "{attr: href}", ""}, {"bad kind", "{css: a, kind: link}", "kind"}, {"bad css", "{css: 'a['}", "css"},
		{":scope", "{css: ':scope'}", "css"}, {"all three", "{css: a, xpath: //a, json: .next}", ""}}
	for i, k := range kinds {
		cases = append(cases, tc{k.key, "{" + k.key + ": '" + k.val + "'}", "-"})
		for _, l := range kinds[i+1:] {
			cases = append(cases, tc{k.key + " and " + l.key, "{" + k.key + ": '" + k.val + "', " + l.key + ": '" + l.val + "'}", ""})
		}
		path := "-"
		if k.key == "json" {
			path = "attr"
		}
		cases = append(cases, tc{"attr with " + k.key, "{" + k.key + ": '" + k.val + "', attr: src}", path})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := "crawl: x\nscraper: {seeds: ['https://a.org/'], follow: [" + c.follow + "]}\n"
			dec, p := decode([]byte(src), "t.yaml", envOf(nil))
			if len(p.list) > 0 {
				t.Fatalf("the case does not decode: %v", p.err())
			}
			dec.ApplyDefaults()
			_, libErr := extract.CompileFollow(dec.FollowRules(), extract.Options{})
			_, cfgErr := parse([]byte(src), "t.yaml", envOf(nil))
			want := "scraper.follow[0]"
			if c.path != "" {
				want += "." + c.path
			}
			at := slices.ContainsFunc(fieldErrors(cfgErr), func(fe *FieldError) bool { return fe.Path == want })
			switch {
			case (libErr == nil) != (cfgErr == nil):
				t.Errorf("extract.CompileFollow: %v\nconfig: %v", libErr, cfgErr)
			case c.path == "-" && libErr != nil:
				t.Errorf("both refuse, want both to accept:\n%v", cfgErr)
			case c.path != "-" && (libErr == nil || !at):
				t.Errorf("want both refused at %s; extract.CompileFollow: %v\nconfig: %v", want, libErr, cfgErr)
			}
		})
	}
}
