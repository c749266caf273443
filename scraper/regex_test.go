package scraper

import (
	"context"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func collect(t *testing.T, m *matcher, body string) []string {
	t.Helper()
	var out []string
	if err := m.each(context.Background(), newBudget(time.Minute), []byte(body), func(b []byte) bool { out = append(out, string(b)); return true }); err != nil {
		t.Fatalf("each: %v", err)
	}
	return out
}

// TestRE2FastPathAgrees runs every expression on both engines: where toRE2
// accepts an expression, Go's regexp must find exactly what regexp2 finds.
func TestRE2FastPathAgrees(t *testing.T) {
	inputs := []string{
		`<a href="/x">1</a> <a HREF='/y'>2</a> data-id="42" data-id="٣٤" id=7`,
		"line1\nline2 \u00a0tab\there\x85next \v x_y-z Ünïcödé 12.5",
		"caf\xe9 \xff invalid utf8 href=\"/caf\xe9\" ]]] [x] a-b a]b",
		`{"url": "/a", "url":"/b"} aaa bbb AbC`,
	}
	exprs := []struct {
		expr string
		re2  bool // the fast path applies
	}{
		{`href="([^"]+)"`, true},
		{`(?i)href=["']([^"']+)`, true},
		{`data-id="(\d+)"`, true},
		{`\w+`, true},
		{`\W+`, true},
		{`[\w.-]+`, true},
		{`\s+`, true},
		{`\S+`, true},
		{`[^\s"]+`, true},
		{`\D+`, true},
		{`[]a]+`, true},
		{`[^]a]+`, true},
		{`(?:a|b)+|(c)`, true},
		{`(?i:abc)|(?s:.)`, true},
		{`(x)?(a+)`, true},
		{`line\d$`, false},
		{`(?m)^line\d`, true},
		{`\bline`, false},
		{`(?<=href=")[^"]+`, false},
		{`(?<name>a)(b)`, false},
		{`(a)\1`, false},
		{`[[:alpha:]]+`, false},
		{`[a-z-[aeiou]]+`, false},
		{`(?x) a b`, false},
		{`\x41`, false},
		{`"url":\s*"([^"]+)"`, true},
		{`\p{Lu}+`, true},
		{`(?i)\p{Lu}+`, false},
		{`(?i)\w+`, true},
	}
	for _, e := range exprs {
		slow, err := compileMatcher("test", e.expr, 0)
		if err != nil {
			t.Fatalf("%q: %v", e.expr, err)
		}
		slow.re2 = nil
		tr, ok := toRE2(e.expr)
		var re *regexp.Regexp
		if ok {
			re, err = regexp.Compile(tr)
			ok = err == nil
		}
		if ok != e.re2 {
			t.Errorf("%q: translated %v (%q), want %v", e.expr, ok, tr, e.re2)
		}
		if !ok {
			continue
		}
		m := &matcher{field: slow.field, rx: slow.rx, re2: re}
		for _, in := range inputs {
			fast, ref := collect(t, m, in), collect(t, slow, in)
			if !slices.Equal(fast, ref) {
				t.Errorf("%q on %q:\nRE2     %q\nregexp2 %q", e.expr, in, fast, ref)
			}
			fm, _ := m.match(newBudget(time.Minute), []byte(in))
			sm, _ := slow.match(newBudget(time.Minute), []byte(in))
			if fm != sm {
				t.Errorf("%q on %q: match %v vs %v", e.expr, in, fm, sm)
			}
		}
	}
}

// TestScannerAgreesWithRegex checks scanAttrs against the regexes it
// stands for (run by regexp2) on hand-made and random input.
func TestScannerAgreesWithRegex(t *testing.T) {
	cases := []string{
		`<a href="/x">`, `<a href='/y'>`, `<a href=/z>`, `<a href = "/sp" >`, `<IMG SRC=a.png>`,
		`<a href="a"src="b">`, `<a href="a" src="b">`, `<a data-href="/no">`, `<a href=>`, `<a href="unterminated`,
		`<a href="x"href="y"href=z>`, `href="nostart"`, ` href=`, ` href= `, "<a\nhref\n=\n'/nl'>", `<a href="" src=''>`,
		`<a title="x=1" href="/t">`, `<a href=/u?a=b&c=d>`, `<a href=a'b>`, "<a href=`tick`>", "é href=x", "\u200dhref=x",
		"\u00a0href=\u00a0x\u00a0y", "\xffhref=\xff", "\xe2\x80href=x", "<a href=\"caf\xe9\">",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	atoms := []string{"<a ", " href", "HREF", " src", "SrC", "=", " = ", `"`, `'`, "/p", "x", " ", "\n", ">", "<", "`",
		"data-", "?q=1&amp;r", "é", "\u00a0", "\u2028", "\u200d", "\xff", "\xe2\x80", "_", "9", "\x85", "\u0085"}
	for i := 0; i < 4000; i++ {
		var b strings.Builder
		for j := rng.IntN(20); j >= 0; j-- {
			b.WriteString(atoms[rng.IntN(len(atoms))])
		}
		cases = append(cases, b.String())
	}
	for expr, syn := range scanned {
		if expr == "" {
			continue
		}
		ref, err := compileMatcher("test", expr, 0)
		if err != nil {
			t.Fatal(err)
		}
		ref.re2 = nil
		for _, c := range cases {
			var got []string
			scanAttrs([]byte(c), syn, func(v []byte) bool { got = append(got, string(v)); return true })
			if want := collect(t, ref, c); !slices.Equal(got, want) {
				t.Fatalf("%s on %q:\nscanner %q\nregex   %q", expr, c, got, want)
			}
		}
	}
}

func TestFastPathChoice(t *testing.T) {
	for expr, want := range map[string]bool{
		`data-id="(\d+)"`:  true, // literal prefix: RE2 skips to it
		`href="([^"]+)"`:   true,
		`(?i)href="(.+?)"`: false, // no literal prefix: regexp2 is faster
		`(a+)+$`:           false, // $ differs
		`(?<=x)y`:          false, // lookbehind
	} {
		m, err := compileMatcher("test", expr, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.re2 != nil; got != want {
			t.Errorf("%q: RE2 %v, want %v", expr, got, want)
		}
	}
}
