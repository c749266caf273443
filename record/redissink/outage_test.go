package redissink_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/recordtest"
	"github.com/distscrape/distscrape/record/redissink"
)

// TestServerDown: Redis killed between Put and Flush: Flush fails with
// ErrUnavailable and keeps the Sets, Puts go on, and once the server is
// back (its append-only file replayed) a retried Flush writes everything,
// each Set once. A key put again while the server is down is kept once by
// the failed Flush, its last Set (the one replaced was never stored: it is
// no version), and a key discarded is not written at all.
func TestServerDown(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := setup(t, redistest.Options{AOF: true, AppendFsync: "always", Password: "outage-pw-0123"})
	s := b.open(t, 1)
	put := func(from, to int) {
		for i := from; i < to; i++ {
			set := recordtest.NewSet(fmt.Sprintf("k%d", i%30), "product", 1+i%3, i)
			if err := s.Put(ctx, set); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(0, 30)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	put(30, 60)
	b.srv.Kill()
	for i := 0; i < 2; i++ { // twice: the Sets of a failed Flush stay for the next
		if i == 1 {
			put(60, 75) // keys k0-k14 put again while down
		}
		err := s.Flush(ctx)
		if !errors.Is(err, record.ErrUnavailable) {
			t.Fatalf("Flush with the server down: %v, want ErrUnavailable", err)
		}
		if strings.Contains(err.Error(), "outage-pw-0123") {
			t.Fatalf("the error shows the password: %v", err)
		}
	}
	s.Discard([]string{"k29"})
	b.srv.Restart(t)
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush after the restart: %v", err)
	}
	r := b.reader(t)
	sets, err := r.Sets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 30 {
		t.Fatalf("%d sets after the outage, want 30", len(sets))
	}
	for _, got := range sets {
		n, _ := strconv.Atoi(strings.TrimPrefix(got.Key, "k"))
		latest := 30 + n
		switch {
		case n < 15:
			latest = 60 + n
		case n == 29:
			latest = n
		}
		want := recordtest.NewSet(got.Key, "product", 1+latest%3, latest)
		if len(got.Records) != len(want.Records) || got.Records[0].Visit != latest {
			t.Fatalf("key %s: %d records of visit %d, want %d of visit %d", got.Key, len(got.Records), got.Records[0].Visit, len(want.Records), latest)
		}
		// The version kept is the Set written before the latest, the
		// first Flush's, once; none for the key discarded.
		v, err := r.Versions(ctx, got.Key, "product")
		if n == 29 {
			if err != nil || len(v) != 0 {
				t.Fatalf("key %s, discarded: versions %v, %v; want none", got.Key, v, err)
			}
			continue
		}
		if err != nil || len(v) != 1 || v[0].Records[0].Visit != n {
			t.Fatalf("key %s: versions %v, %v; want the Set of visit %d", got.Key, v, err, n)
		}
	}
	expectCounts(t, r, "product")
}

// TestReaderServerDown: a reader of a server gone says ErrUnavailable.
func TestReaderServerDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, redistest.Options{})
	r := b.reader(t)
	b.srv.Kill()
	if _, err := r.Sets(ctx); !errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("Sets with the server down: %v, want ErrUnavailable", err)
	}
	if _, err := redissink.NewReader(ctx, b.cfg, recordtest.Crawl); !errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("NewReader with the server down: %v, want ErrUnavailable", err)
	}
}

// TestNoPassword: no error shows the URL's password, in any of its forms,
// whatever fails: a wrong password, a closed port, a URL go-redis cannot
// parse, a cluster URL with a bad node, a server killed under a sink.
func TestNoPassword(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel) // the parallel subtests run after this function returns
	const pw = "S3cr%t p@ss:w/rd'x"
	srv := redistest.Start(t, redistest.Options{Password: "right-pw-0123"})
	esc := url.UserPassword("u", pw).String()
	closed, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"wrong password": "redis://" + esc + "@" + srv.Addr() + "/0",
		"closed port":    fmt.Sprintf("redis://%s@127.0.0.1:%d/0", esc, closed),
		"bad escape":     "redis://u:" + pw + "@" + srv.Addr() + "/0",
		"bad database":   "redis://" + esc + "@" + srv.Addr() + "/x",
		"cluster":        fmt.Sprintf("redis://%s@127.0.0.1:%d?addr=127.0.0.1:%d", esc, closed, closed),
	}
	forms := []string{pw, url.QueryEscape(pw), url.PathEscape(pw), esc, "p@ss", "S3cr"}
	noPassword := func(t *testing.T, name string, err error) {
		t.Helper()
		for _, f := range forms {
			if strings.Contains(err.Error(), f) || strings.Contains(fmt.Sprintf("%+v", err), f) {
				t.Fatalf("%s: the error shows the password (%q): %v", name, f, err)
			}
		}
	}
	for name, u := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := redissink.Config{URL: u, Key: testKey}
			_, err := redissink.New(ctx, cfg, recordtest.Options(0))
			_, rerr := redissink.NewReader(ctx, cfg, recordtest.Crawl)
			cerr := (&redissink.Section{URL: u, Key: testKey}).Check(ctx, recordtest.Crawl)
			for _, e := range []error{err, rerr, cerr} {
				if e == nil {
					t.Fatalf("%s: connected", name)
				}
				noPassword(t, name, e)
			}
			if name == "closed port" && !errors.Is(err, record.ErrUnavailable) {
				t.Fatalf("%s: %v, want ErrUnavailable", name, err)
			}
		})
	}
	t.Run("server killed", func(t *testing.T) {
		t.Parallel()
		serverKilled(t, ctx, pw, noPassword)
	})
}

// serverKilled: a sink with the right password, its server killed under
// it.
func serverKilled(t *testing.T, ctx context.Context, pw string, noPassword func(*testing.T, string, error)) {
	pwd := redistest.Start(t, redistest.Options{Password: pw})
	u := "redis://" + url.UserPassword("", pw).String() + "@" + pwd.Addr() + "/0"
	s, err := redissink.New(ctx, redissink.Config{URL: u, Key: testKey}, recordtest.Options(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.Put(ctx, recordtest.NewSet("k", "article", 1, 1)); err != nil {
		t.Fatal(err)
	}
	pwd.Kill()
	err = s.Flush(ctx)
	if !errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("Flush with the server killed: %v, want ErrUnavailable", err)
	}
	noPassword(t, "server killed", err)
}

// TestEvicting: a server that may evict keys is refused at open and by
// check, naming its policy; a reader may still read it.
func TestEvicting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, redistest.Options{MaxmemoryPolicy: "allkeys-lru"})
	if _, err := redissink.New(ctx, b.cfg, recordtest.Options(0)); !errors.Is(err, redissink.ErrEvicting) || !strings.Contains(err.Error(), "allkeys-lru") {
		t.Fatalf("New on an evicting server: %v, want ErrEvicting naming the policy", err)
	}
	if err := (&redissink.Section{URL: b.cfg.URL, Key: testKey}).Check(ctx, recordtest.Crawl); !errors.Is(err, redissink.ErrEvicting) {
		t.Fatalf("Check on an evicting server: %v, want ErrEvicting", err)
	}
	b.reader(t)
}
