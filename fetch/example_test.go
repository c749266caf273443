package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/distscrape/distscrape/fetch"
)

// Fetch returns a page, or an error that says what the crawl should do.
func ExampleClient_Fetch() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		case "/busy":
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<p>hello</p>")
		}
	}))
	defer srv.Close()

	c, err := fetch.New(fetch.DefaultConfig()) // robots.txt obeyed
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for _, path := range []string{"/", "/busy", "/private/x"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		resp, err := c.Fetch(context.Background(), req)
		var o fetch.Outcome
		switch {
		case err == nil:
			fmt.Printf("%s: %d %s %q\n", path, resp.Status, resp.ContentType, resp.Body)
		case errors.As(err, &o):
			fmt.Printf("%s: %s final=%v retry_after=%v\n", path, o.Reason(), o.Final(), o.RetryAfter())
		}
	}
	// Output:
	// /: 200 text/html "<p>hello</p>"
	// /busy: http 503 final=false retry_after=2m0s
	// /private/x: robots disallowed final=true retry_after=0s
}
