package pgsink_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/pgtest"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/pgsink"
	"github.com/distscrape/distscrape/record/recordtest"
)

// TestServerDown: PostgreSQL stopped (immediate) between Put and Flush:
// Flush fails with ErrUnavailable and keeps the Sets, Puts go on, and once
// the server is back a retried Flush writes everything, each Set once. A
// key put again while the server is down is kept once by the failed
// Flush, its last Set (the one replaced was never stored: it is no
// version), and a key discarded is not written at all.
func TestServerDown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := pgtest.Start(t, pgtest.Options{})
	cfg := pgsink.Config{URL: srv.CreateDB(t, "outage")}
	s, err := pgsink.New(ctx, cfg, recordtest.Options(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
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
	srv.Stop(t)
	for i := 0; i < 2; i++ { // twice: the Sets of a failed Flush stay for the next
		if i == 1 {
			put(60, 75) // keys k0-k14 put again while down
		}
		err := s.Flush(ctx)
		if !errors.Is(err, record.ErrUnavailable) {
			t.Fatalf("Flush with the server down: %v, want ErrUnavailable", err)
		}
		if strings.Contains(err.Error(), srv.Password) {
			t.Fatalf("the error shows the password: %v", err)
		}
	}
	s.Discard([]string{"k29"})
	srv.Restart(t)
	var last error
	for i := 0; i < 100; i++ { // the pool drops its dead connections as it meets them
		if last = s.Flush(ctx); last == nil {
			break
		}
		if !errors.Is(last, record.ErrUnavailable) {
			t.Fatalf("Flush after the restart: %v", last)
		}
	}
	if last != nil {
		t.Fatalf("Flush never succeeded after the restart: %v", last)
	}
	r, err := pgsink.NewReader(ctx, cfg, recordtest.Crawl)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
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
		wantSet := recordtest.NewSet(got.Key, "product", 1+latest%3, latest)
		if len(got.Records) != len(wantSet.Records) || got.Records[0].Visit != latest {
			t.Fatalf("key %s: %d records of visit %d, want %d of visit %d", got.Key, len(got.Records), got.Records[0].Visit, len(wantSet.Records), latest)
		}
		// Versions: the one kept is the Set written before the latest,
		// the first flush's, once.
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
}

// TestNoPassword: no error shows the URL's password, in any of its forms,
// whatever fails: a wrong password, a closed port, a URL or connection
// string pgx cannot parse, a bad sslmode.
func TestNoPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := pgtest.Shared(t)
	const pw = "S3cr%t p@ss:w/rd'x"
	esc := url.UserPassword("u", pw).String()
	closed := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}()
	host := fmt.Sprintf("127.0.0.1:%d", srv.Port)
	cases := map[string]string{
		"wrong password":       "postgres://" + url.UserPassword(srv.User, pw).String() + "@" + host + "/postgres?sslmode=disable",
		"closed port":          fmt.Sprintf("postgres://%s@127.0.0.1:%d/db?sslmode=disable&connect_timeout=5", esc, closed),
		"bad port":             "postgres://" + esc + "@127.0.0.1:notaport/db",
		"bad sslmode":          "postgres://" + esc + "@" + host + "/db?sslmode=sometimes",
		"bad escape":           "postgres://u:" + pw + "@" + host + "/db",
		"dsn wrong password":   fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=postgres sslmode=disable password='%s'", srv.Port, srv.User, strings.ReplaceAll(pw, "'", `\'`)),
		"dsn closed port":      fmt.Sprintf("host=127.0.0.1 port=%d user=u password=%s sslmode=disable", closed, strings.NewReplacer(" ", "", "'", "").Replace(pw)),
		"dsn bad key":          "host=127.0.0.1 password='" + strings.ReplaceAll(pw, "'", `\'`) + "' port=x",
		"sslmode require, off": "postgres://" + esc + "@" + host + "/postgres?sslmode=require",
	}
	forms := []string{pw, url.QueryEscape(pw), url.PathEscape(pw), esc, "p@ss", "S3cr"}
	for name, conn := range cases {
		_, err := pgsink.New(ctx, pgsink.Config{URL: conn}, recordtest.Options(0))
		if err == nil {
			t.Fatalf("%s: connected", name)
		}
		_, rerr := pgsink.NewReader(ctx, pgsink.Config{URL: conn}, "c")
		for _, e := range []error{err, rerr} {
			for _, f := range forms {
				if strings.Contains(e.Error(), f) || strings.Contains(fmt.Sprintf("%+v", e), f) {
					t.Fatalf("%s: the error shows the password (%q): %v", name, f, e)
				}
			}
		}
		if strings.Contains(name, "closed port") && !errors.Is(err, record.ErrUnavailable) {
			t.Fatalf("%s: %v, want ErrUnavailable", name, err)
		}
	}
}
