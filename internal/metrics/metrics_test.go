package metrics

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
)

func TestServeExposesFetchesAndQueues(t *testing.T) {
	tr, err := memtracker.New(memtracker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := tr.Add(ctx, []tracker.Item{{Key: "a"}, {Key: "b"}, {Key: "c"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Checkout(ctx, "w", 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	m := New("crawl1", "w", tr.Stats)
	m.ObserveFetch("ok", 1000, 20*time.Millisecond)
	m.ObserveFetch("ok", 24, 10*time.Millisecond)
	m.ObserveFetch("final", 0, 0)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- m.Serve(sctx, ln, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	// The listener is bound already: the first request is served.
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatalf("metrics not served: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	for _, want := range []string{
		`distscrape_pages_total{crawl="crawl1",outcome="ok",worker="w"} 2`,
		`distscrape_pages_total{crawl="crawl1",outcome="final",worker="w"} 1`,
		`distscrape_fetched_bytes_total{crawl="crawl1",worker="w"} 1024`,
		`distscrape_fetch_seconds_count{crawl="crawl1",worker="w"} 2`,
		`distscrape_items{crawl="crawl1",state="pending"} 2`,
		`distscrape_items{crawl="crawl1",state="leased"} 1`,
		`distscrape_workers{crawl="crawl1"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	stop()
	if err := <-served; err != nil {
		t.Fatalf("Serve after stop: %v", err)
	}
}
