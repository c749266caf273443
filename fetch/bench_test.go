package fetch

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkFetch is the client's overhead and throughput against a local
// server: 64 concurrent fetches of a 16 KiB page on one host, with the
// per-host limit lifted to match (the target a crawl benchmark uses).
func BenchmarkFetch(b *testing.B) {
	page := bytes.Repeat([]byte("<p>lorem ipsum</p>\n"), 16<<10/19)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(page)
	}))
	defer srv.Close()
	c, err := New(Config{Concurrency: 64, PerHostConcurrency: 64})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	b.SetParallelism(32) // 32 × GOMAXPROCS(2) = 64 goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/p", nil)
			resp, err := c.Fetch(context.Background(), req)
			if err != nil || len(resp.Body) != len(page) {
				b.Errorf("Fetch: %v", err)
				return
			}
		}
	})
}
