package metrics

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/redistest"
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

	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- m.Serve(sctx, addr, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	var body string
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics never served: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
