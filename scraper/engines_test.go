package scraper

import (
	"context"
	"regexp"
	"testing"
	"time"
)

// BenchmarkEngines compares Go's RE2 engine and regexp2 on the 100 KB
// bench page: RE2 wins when the regex starts with a literal, loses on
// case-insensitive or class-led patterns (which is why compileMatcher
// picks RE2 only for the former).
func BenchmarkEngines(b *testing.B) {
	body := benchPage()
	for _, re := range []string{`href="([^"]+)"`, `(?i)href=["']([^"']+)`, `(?i)\s(?:href|src)\s*=\s*["']?([^"'\s>]+)`, `data-x="(\w+)`} {
		slow, _ := compileMatcher("x", re, 0)
		slow.re2 = nil
		tr, _ := toRE2(re)
		m := &matcher{rx: slow.rx, re2: regexp.MustCompile(tr)}
		for name, mm := range map[string]*matcher{"re2": m, "regexp2": slow} {
			b.Run(name+"/"+re, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					mm.each(context.Background(), newBudget(time.Minute), body, func([]byte) bool { return true })
				}
			})
		}
	}
}
