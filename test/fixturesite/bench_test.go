package fixturesite_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// BenchmarkServe measures the site's ceiling over real loopback HTTP with
// keep-alive: the 20,000-page site, 64 requests in flight.
func BenchmarkServe(b *testing.B) {
	s, base := start(b, fixturesite.Options{Pages: 20000})
	tr := &http.Transport{MaxIdleConnsPerHost: 128}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	var next atomic.Int64
	b.SetParallelism(32) // 2 cores × 32 = 64 in flight
	b.SetBytes(8192)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(next.Add(1) % 20000)
			resp, err := c.Get(base + fixturesite.PagePath(i))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	_ = s
}

// BenchmarkHandler measures the handler alone, without the network.
func BenchmarkHandler(b *testing.B) {
	s := fixturesite.New(fixturesite.Options{Pages: 20000})
	s.Render("http://127.0.0.1:1")
	reqs := make([]*http.Request, 1000)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/page/"+strconv.Itoa(i+1)+".html", nil)
	}
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.ServeHTTP(w, reqs[i%len(reqs)])
	}
}
