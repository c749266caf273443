package fetch

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/recorder"
)

func exchange(t *testing.T, c *Client, url string) (*Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testBound)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Exchange(ctx, req)
}

// TestExchangeEveryStatus: Exchange answers a redirect, a 404 and a 503 as
// Responses (the redirect not followed), while StatusError gives the
// outcome Fetch gives for the same status.
func TestExchangeEveryStatus(t *testing.T) {
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /private\n"))
		case "/moved":
			http.Redirect(w, r, "/target", http.StatusFound)
		case "/target":
			_, _ = w.Write([]byte("target"))
		case "/busy":
			w.Header().Set("Retry-After", "7")
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			http.Error(w, "nothing here", http.StatusNotFound)
		}
	}))
	c := newClient(t, DefaultConfig())

	resp, err := exchange(t, c, srv.URL+"/moved")
	if err != nil || resp.Status != http.StatusFound || resp.Header.Get("Location") != "/target" {
		t.Fatalf("redirect: %v, %+v", err, resp)
	}
	for _, tc := range []struct {
		path  string
		code  int
		final bool
	}{{"/missing", 404, true}, {"/busy", 503, false}} {
		resp, err := exchange(t, c, srv.URL+tc.path)
		if err != nil || resp.Status != tc.code || len(resp.Body) == 0 {
			t.Fatalf("%s: %v, %+v", tc.path, err, resp)
		}
		se := StatusError(resp)
		_, ferr := get(t, c, srv.URL+tc.path)
		fe := outcome(t, ferr)
		if se.Final() != tc.final || se.Final() != fe.Final() || se.Reason() != fe.Reason() || se.RetryAfter() != fe.RetryAfter() || se.Status != tc.code {
			t.Errorf("%s: StatusError %v (final %v, after %v), Fetch %v (final %v, after %v)",
				tc.path, se, se.Final(), se.RetryAfter(), fe, fe.Final(), fe.RetryAfter())
		}
	}
}

// TestExchangeRefusesWhatFetchRefuses: robots.txt, the metadata address in
// its spellings and a bad scheme fail Exchange before any request.
func TestExchangeRefusesWhatFetchRefuses(t *testing.T) {
	rec := recorder.Start(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /private\n"))
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	c := newClient(t, DefaultConfig())
	if _, err := exchange(t, c, rec.URL+"/private/x"); !errors.Is(err, ErrRobotsDisallowed) {
		t.Errorf("robots: %v", err)
	}
	for _, u := range []string{"http://169.254.169.254/latest/", "http://2852039166/", "http://[::ffff:169.254.169.254]/", "http://metadata.google.internal/"} {
		if _, err := exchange(t, c, u); !errors.Is(err, ErrMetadata) {
			t.Errorf("%s: %v, want ErrMetadata", u, err)
		}
	}
	if _, err := exchange(t, c, "ftp://127.0.0.1/"); !errors.Is(err, ErrScheme) {
		t.Errorf("ftp: %v", err)
	}
	for _, s := range rec.Seen() {
		if s != "GET "+rec.Listener.Addr().String()+"/robots.txt" {
			t.Errorf("request reached the server: %s", s)
		}
	}
}
