package manager_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/tracker"
)

// recordingSaver wraps a real saver and keeps a copy of every page it is
// given, to check what the manager hands savers.
type recordingSaver struct {
	saver.Saver
	mu    sync.Mutex
	saved []saver.Page
}

func (r *recordingSaver) Save(ctx context.Context, p *saver.Page) error {
	r.mu.Lock()
	r.saved = append(r.saved, *p)
	r.mu.Unlock()
	return r.Saver.Save(ctx, p)
}

// TestPagesCarryTheExchange: every page the manager saves carries the HTTP
// exchange an archive needs: the request as sent, the protocol, status
// line and headers as received, and the server's address.
func TestPagesCarryTheExchange(t *testing.T) {
	const pages = 12
	b := setup(t, pages, tracker.Options{})
	rec := &recordingSaver{Saver: b.sv}
	run(t, b.manager(t, nil, rec, manager.Config{Concurrency: 4, Batch: 4}), time.Minute)
	if len(rec.pages()) != pages {
		t.Fatalf("%d pages saved, want %d", len(rec.pages()), pages)
	}
	for _, p := range rec.pages() {
		checks := []struct {
			what string
			ok   bool
		}{
			{"method", p.Method == http.MethodGet},
			{"request User-Agent", p.RequestHeader.Get("User-Agent") != ""},
			{"request Accept-Encoding", p.RequestHeader.Get("Accept-Encoding") != ""},
			{"proto", p.Proto == "HTTP/1.1"},
			{"status line", p.Status == 200 && p.Reason == "OK"},
			{"response header", p.Header.Get("Content-Type") == "text/html" && p.Header.Get("Date") != ""},
			{"remote address", p.RemoteAddr == b.site.srv.Listener.Addr().String()},
			{"no wire body for an identity body", p.WireBody == nil},
			{"fetched at", !p.FetchedAt.IsZero()},
		}
		for _, c := range checks {
			if !c.ok {
				t.Errorf("page %s: %s missing or wrong: %+v", p.Key, c.what, p)
			}
		}
	}
}
