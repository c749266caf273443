package chromium

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/render"
	"github.com/distscrape/distscrape/test/fixturesite"
)

// BenchmarkRender renders a page of the fixture site (a link page with its
// filler text, taken at the load event) over and over, one tab: it
// reports rendered pages per minute per tab and the browser's resident
// memory per tab (the proportional set size of its whole process tree:
// one browser, one tab).
func BenchmarkRender(b *testing.B) {
	for _, tc := range []struct {
		name string
		path string
		rule render.Rule
	}{
		{"load", fixturesite.PagePath(1), render.Rule{}},
		{"script-wait", fixturesite.JSLatePath, render.Rule{WaitFor: "#late"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tb := setup(b, func(_ *fetch.Config, c *Config) { c.Concurrency = 1 })
			url := tb.site.URL() + tc.path
			ctx := context.Background()
			var rss int64
			start := time.Now()
			b.ResetTimer()
			for b.Loop() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if _, err := tb.browser.Render(ctx, req, tc.rule); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			tb.browser.mu.Lock()
			if in := tb.browser.cur; in != nil {
				rss = treeRSS(in.pid)
			}
			tb.browser.mu.Unlock()
			b.ReportMetric(float64(b.N)/elapsed.Minutes(), "pages/min/tab")
			b.ReportMetric(float64(rss)/(1<<20), "MiB-pss/tab")
		})
	}
}
