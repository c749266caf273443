package fetch

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/recorder"
)

// TestRobotsRedirectStaysOnHost: a robots.txt redirect is followed on its
// own origin only; one to any other host (another port, another name for
// the same machine, an internal service) is never requested, and counts as
// "unavailable" (RFC 9309: allow all).
func TestRobotsRedirectStaysOnHost(t *testing.T) {
	internal := recorder.Start(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("User-agent: *\nDisallow: /\n"))
	})
	tests := []struct {
		name     string
		location func(site string) string // where the site's /robots.txt redirects
		page     string
		reason   string // "" = fetched
	}{
		{name: "other port", page: "/private/x",
			location: func(string) string { return internal.URL + "/internal-admin?action=drop" }},
		{name: "other name, same port", page: "/private/x",
			location: func(site string) string {
				return strings.Replace(site, "127.0.0.1", "localhost", 1) + "/internal-admin?action=drop"
			}},
		{name: "on host, then off host", page: "/private/x",
			location: func(string) string {
				return "/hop?to=" + url.QueryEscape(internal.URL+"/internal-admin?action=drop")
			}},
		{name: "same origin is followed", page: "/private/x", reason: "robots disallowed",
			location: func(string) string { return "/real-robots.txt" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var srvURL string
			srv := recorder.Start(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/robots.txt":
					http.Redirect(w, r, tt.location(srvURL), http.StatusMovedPermanently)
				case "/hop":
					http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
				case "/real-robots.txt":
					w.Write([]byte("User-agent: *\nDisallow: /private\n"))
				default:
					w.Write([]byte("page"))
				}
			})
			srvURL = srv.URL
			c := newClient(t, DefaultConfig())
			_, err := get(t, c, srv.URL+tt.page)
			if tt.reason == "" && err != nil {
				t.Fatalf("Fetch: %v, want the page (an off-host robots.txt is unavailable: allow all)", err)
			}
			if tt.reason != "" {
				if o := outcome(t, err); o.Reason() != tt.reason {
					t.Fatalf("Fetch: %v, want %q", err, tt.reason)
				}
			}
			if n := internal.Count("/internal-admin") + srv.Count("/internal-admin"); n != 0 {
				t.Fatalf("the robots.txt redirect reached /internal-admin %d times", n)
			}
		})
	}
}

func TestSameOrigin(t *testing.T) {
	tests := []struct {
		origin, target string
		want           bool
	}{
		{"http://h/robots.txt", "http://h/other.txt", true},
		{"http://h/robots.txt", "http://H:80/robots.txt", true},
		{"http://h/robots.txt", "https://h/robots.txt", true}, // the https upgrade
		{"http://h:80/robots.txt", "https://h:443/robots.txt", true},
		{"https://h/robots.txt", "http://h/robots.txt", false}, // no downgrade
		{"http://h/robots.txt", "http://h:8080/robots.txt", false},
		{"http://h:8080/robots.txt", "https://h/robots.txt", false},
		{"http://h/robots.txt", "http://g/robots.txt", false},
		{"http://h/robots.txt", "http://h.evil/robots.txt", false},
		{"http://127.0.0.1:8000/robots.txt", "http://localhost:8000/robots.txt", false},
	}
	for _, tt := range tests {
		o, _ := url.Parse(tt.origin)
		u, _ := url.Parse(tt.target)
		if got := sameOrigin(o, u); got != tt.want {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tt.origin, tt.target, got, tt.want)
		}
	}
}
