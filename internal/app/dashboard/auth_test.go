package dashboard

import (
	"bufio"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestTokenRedirectStaysLocal: the redirect that trades ?token= for a cookie
// goes to a path of this dashboard, whatever the request's path holds. A
// Location starting with // or /\ is another site to a browser (which reads
// a backslash as a slash and drops tabs and newlines), so the class is every
// way a request path can start with two separators.
func TestTokenRedirectStaysLocal(t *testing.T) {
	b := setup(t, Config{Crawl: "c", Token: testToken})
	host := strings.TrimPrefix(b.url, "http://")
	for _, path := range []string{
		"//evil.example/",
		"///evil.example/",
		"////evil.example/x",
		`/\evil.example/`,
		`/\\evil.example/`,
		`/\/evil.example/`,
		"/%2F%2Fevil.example/",
		"/%2f/evil.example/",
		"/%5Cevil.example/",
		"/%5C%5Cevil.example/",
		"/%09/evil.example/",
		"/%0A/evil.example/",
		"//evil.example/api/state",
	} {
		t.Run(path, func(t *testing.T) {
			loc := rawGet(t, host, path+"?token="+url.QueryEscape(testToken))
			if loc == "" {
				t.Fatal("no redirect")
			}
			// What a browser does with the Location: drop tabs and newlines,
			// read backslashes as slashes.
			seen := strings.NewReplacer("\t", "", "\n", "", "\r", "", `\`, "/").Replace(loc)
			if !strings.HasPrefix(seen, "/") || strings.HasPrefix(seen, "//") {
				t.Fatalf("Location %q leaves the dashboard", loc)
			}
			if u, err := url.Parse(loc); err != nil || u.Host != "" || u.Scheme != "" {
				t.Fatalf("Location %q: %v, host %q", loc, err, u.Host)
			}
		})
	}
	// An ordinary path and query are kept.
	if loc := rawGet(t, host, "/api/state?token="+url.QueryEscape(testToken)+"&x=1"); loc != "/api/state?x=1" {
		t.Fatalf("Location %q, want /api/state?x=1", loc)
	}
}

// rawGet sends the request line as written (a client library would clean
// the path) and returns the answer's Location.
func rawGet(t *testing.T, host, target string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("GET %s: %d, want 303", target, res.StatusCode)
	}
	return res.Header.Get("Location")
}
