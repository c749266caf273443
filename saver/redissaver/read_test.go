package redissaver_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/redissaver"
	"github.com/distscrape/distscrape/saver/savertest"
)

func TestWalkContract(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	var db atomic.Int32
	for _, compress := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "zstd"}[compress], func(t *testing.T) {
			savertest.RunWalk(t, func(t *testing.T) *savertest.WalkTarget {
				n := int(db.Add(1))
				if n > 15 {
					t.Fatal("out of Redis databases")
				}
				cfg := redissaver.Config{URL: srv.URL(n), Crawl: "c", Worker: "w1", Compress: compress}
				s, err := redissaver.New(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Worker = ""
				return &savertest.WalkTarget{Saver: s, Walk: func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error) {
					return redissaver.Walk(ctx, cfg, fn)
				}}
			})
		})
	}
}

// Only the crawl's page hashes are read: not another crawl's, not a
// hash that is no page, not a key of another type; a crawl name and a
// template with glob characters match literally.
func TestWalkScope(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Options{})
	c := srv.Client(t)
	const tmpl = "{{{crawl}}}:p*[x]:{id}"
	save := func(crawl string, pages ...*saver.Page) {
		s, err := redissaver.New(ctx, redissaver.Config{URL: srv.URL(0), Key: tmpl, Crawl: crawl, Worker: "w"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			if err := s.Save(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// "a*" would match crawl "ab" if the crawl's "*" were a wildcard.
	save("a*", savertest.NewPage("1", []byte("mine")))
	save("ab", savertest.NewPage("2", []byte("another crawl's")))
	c.HSet(ctx, "{a*}:p*[x]:junk", "field", "value")
	c.Set(ctx, "{a*}:p*[x]:string", "value", 0)
	var got []string
	w, err := redissaver.Walk(ctx, redissaver.Config{URL: srv.URL(0), Key: tmpl, Crawl: "a*"}, func(p *saver.Page) error {
		got = append(got, p.Key+"="+string(p.Body))
		return nil
	})
	if err != nil || strings.Join(got, ",") != "1=mine" || w.Skipped != 1 {
		t.Fatalf("Walk: %v, %q, %+v; want 1=mine and the junk hash skipped", err, got, w)
	}
}

func TestWalkUnreachable(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	url := srv.URL(0)
	srv.Kill()
	_, err := redissaver.Walk(context.Background(), redissaver.Config{URL: url, Crawl: "c"}, func(*saver.Page) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "scan") {
		t.Fatalf("Walk of a stopped server: %v, want the scan's error", err)
	}
	if _, err := redissaver.Walk(context.Background(), redissaver.Config{URL: "http://x", Crawl: "c"}, nil); err == nil {
		t.Fatal("Walk of an http:// URL: no error")
	}
}
