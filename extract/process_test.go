package extract

import (
	"reflect"
	"testing"

	"github.com/distscrape/distscrape/record"
)

const processPage = `<html><body>
<p class="price"> 1.234,50 € </p><p class="tags">Steel, KITCHEN ,,  red  oak</p>
<p class="code">  SKU-0042  </p><i class="x">a</i><i class="x">b</i><i class="x">c</i>
<p class="sp" title="  keep  me  ">x</p></body></html>`

// Each step does what docs/config.md says, in the order given.
func TestProcessSteps(t *testing.T) {
	p := htmlPage(processPage)
	for _, tc := range []struct {
		name string
		f    Field
		want any
	}{
		{"decimal comma", Field{CSS: ".price", Type: record.Float, Process: []Step{{Decimal: ","}}}, 1234.5},
		{"decimal dot", Field{CSS: ".code", Type: record.Int, Process: []Step{{Replace: &Replace{Regex: `\D`, With: ""}}, {Decimal: "."}}}, int64(42)},
		{"split squash lower", Field{CSS: ".tags", All: true, Process: []Step{{Split: ","}, {Squash: true}, {Lower: true}}},
			[]any{"steel", "kitchen", "red oak"}},
		{"split then join", Field{CSS: ".tags", Process: []Step{{Split: ","}, {Squash: true}, {Join: "|"}}}, "Steel|KITCHEN|red oak"},
		{"replace with a group", Field{CSS: ".code", Process: []Step{{Replace: &Replace{Regex: `SKU-0*(\d+)`, With: "#$1"}}}}, "#42"},
		{"upper", Field{CSS: ".x", Process: []Step{{Upper: true}}}, "A"},
		{"join all", Field{CSS: ".x", Process: []Step{{Join: ""}, {Join: "+"}}}, nil},
		{"count", Field{CSS: ".x", Type: record.Int, Process: []Step{{Count: true}}}, int64(3)},
		{"count of nothing", Field{CSS: ".none", Type: record.Int, Process: []Step{{Count: true}}}, int64(0)},
		{"trimmed by default", Field{CSS: ".sp", Attr: "title"}, "keep  me"},
		{"keep spaces", Field{CSS: ".sp", Attr: "title", KeepSpaces: true}, "  keep  me  "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Name = "f"
			if tc.want == nil { // an empty step is refused at Compile
				if _, err := Compile([]Rule{{Name: "r", Match: ".", Fields: []Field{tc.f}}}, Options{}); err == nil {
					t.Fatal("Compile accepted an empty step")
				}
				return
			}
			got, ok := one(t, p, tc.f)
			if !ok || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v (found %v), want %#v", got, ok, tc.want)
			}
		})
	}
}

// TestTextAndWhiteSpace: what docs/config.md "Text and white space" says
// a field's string is, by kind.
func TestTextAndWhiteSpace(t *testing.T) {
	p := htmlPage("<html><body><ul class=\"l\"><li>a</li><li>b</li></ul><p class=\"n\"><b>4</b>2</p>" +
		"<p class=\"s\"><span>a</span><span>b</span></p><div class=\"w\">\n one\u00a0\t two <script>x()</script><!-- c --></div>" +
		"<p class=\"t\" title=\" in\n side \">  first\n  second  </p><p class=\"z\">K=\x00v</p></body></html>")
	for _, tc := range []struct {
		name string
		f    Field
		want any
	}{
		{"block elements apart", Field{CSS: ".l"}, "a b"},
		{"inline elements joined", Field{CSS: ".n"}, "42"},
		{"spans joined", Field{CSS: ".s"}, "ab"},
		{"runs of white space, script and comment out", Field{CSS: ".w"}, "one two"},
		{"xpath element collapsed", Field{XPath: `//p[@class="t"]`}, "first second"},
		{"xpath text node trimmed, inside kept", Field{XPath: `//p[@class="t"]/text()`}, "first\n  second"},
		{"attribute trimmed, inside kept", Field{CSS: ".t", Attr: "title"}, "in\n side"},
		{"attribute kept whole", Field{CSS: ".t", Attr: "title", KeepSpaces: true}, " in\n side "},
		{"int trimmed", Field{CSS: ".n", Type: record.Int}, int64(42)},
		{"NUL kept whole still replaced", Field{Regex: `K=(.*?)</p>`, KeepSpaces: true}, "\ufffdv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Name = "f"
			got, ok := one(t, p, tc.f)
			if !ok || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v (found %v), want %#v", got, ok, tc.want)
			}
		})
	}
}
