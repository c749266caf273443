package scraper

import (
	"context"
	"regexp"
	"slices"
	"testing"
	"time"
)

// FuzzRE2Agrees checks the RE2 fast path against regexp2: wherever toRE2
// translates an expression, both engines find the same values.
func FuzzRE2Agrees(f *testing.F) {
	for _, s := range [][2]string{{`href="([^"]+)"`, `<a href="x">`}, {`(?i)\w+\s\d`, "Ab 1 ü ٣"}, {`[]a-]+|(b)*`, "ab]-"}, {`(a|ab)(c|bcd)(d*)`, "abcd"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, expr, in string) {
		tr, ok := toRE2(expr)
		if !ok {
			return
		}
		re, err := regexp.Compile(tr)
		if err != nil {
			return
		}
		slow, err := compileMatcher("f", expr, 0)
		if err != nil {
			return
		}
		slow.re2 = nil
		fast := &matcher{rx: slow.rx, re2: re}
		var a, b []string
		if err := slow.each(context.Background(), newBudget(200*time.Millisecond), []byte(in), func(v []byte) bool { b = append(b, string(v)); return true }); err != nil {
			return
		}
		fast.each(context.Background(), newBudget(time.Minute), []byte(in), func(v []byte) bool { a = append(a, string(v)); return true })
		// Engines differ on empty matches next to a previous match; empty
		// values are skipped by every caller.
		a = slices.DeleteFunc(a, func(s string) bool { return s == "" })
		b = slices.DeleteFunc(b, func(s string) bool { return s == "" })
		if !slices.Equal(a, b) {
			t.Fatalf("%q (RE2 %q) on %q: RE2 %q, regexp2 %q", expr, tr, in, a, b)
		}
	})
}
