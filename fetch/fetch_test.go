package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"net/http/httptest"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// gzipBomb is 1 GiB of zeros as 1024 concatenated gzip members of 1 MiB
// each (a valid multi-member gzip stream of about 1 MiB).
func gzipBomb(t *testing.T) []byte {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	if _, err := zw.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return bytes.Repeat(member.Bytes(), 1024)
}

// zstdBomb is 1 GiB of zeros as 1024 concatenated zstd frames.
func zstdBomb(t *testing.T) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	frame := enc.EncodeAll(make([]byte, 1<<20), nil)
	return bytes.Repeat(frame, 1024)
}

func compressed(t *testing.T, enc string, data []byte) []byte {
	var b bytes.Buffer
	var w io.WriteCloser
	switch enc {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "br":
		w = brotli.NewWriter(&b)
	case "zstd":
		zw, err := zstd.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return b.Bytes()
}

// outcomeServer serves one path per outcome the fetcher classifies.
func outcomeServer(t *testing.T) *httptest_ {
	page := []byte("<html><a href=/x>x</a></html>")
	big := bytes.Repeat([]byte("a"), 2<<20)
	gz, zs := gzipBomb(t), zstdBomb(t)
	small := map[string][]byte{}
	for _, enc := range []string{"gzip", "br", "zstd"} {
		small[enc] = compressed(t, enc, page)
	}
	brBig := compressed(t, "br", make([]byte, 4<<20))
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/HTML; charset=utf-8")
		w.Write(page)
	})
	mux.HandleFunc("/nocontenttype", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		w.Write(page)
	})
	for _, code := range []int{403, 404, 410, 500, 503, 408} {
		mux.HandleFunc(fmt.Sprintf("/status/%d", code), func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
		})
	}
	mux.HandleFunc("/429s", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	mux.HandleFunc("/429d", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", time.Now().Add(30*time.Second).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusTooManyRequests)
	})
	mux.HandleFunc("/503ra", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(big) })
	mux.HandleFunc("/bigchunked", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 64; i++ {
			if _, err := w.Write(big[:64<<10]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/gzipbomb", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz)
	})
	mux.HandleFunc("/zstdbomb", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "zstd")
		w.Write(zs)
	})
	mux.HandleFunc("/brbig", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "br")
		w.Write(brBig)
	})
	for enc, b := range small {
		mux.HandleFunc("/enc/"+enc, func(w http.ResponseWriter, r *http.Request) {
			if !strings.Contains(r.Header.Get("Accept-Encoding"), enc) {
				http.Error(w, "no "+enc+" accepted", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Encoding", enc)
			w.Header().Set("Content-Type", "text/html")
			w.Write(b)
		})
	}
	mux.HandleFunc("/badgzip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write([]byte("this is not gzip"))
	})
	mux.HandleFunc("/weirdenc", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "compress")
		w.Write(page)
	})
	mux.HandleFunc("/loop/a", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop/b", http.StatusFound) })
	mux.HandleFunc("/loop/b", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop/a", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/redir/ok", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/redir/file", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "file:///etc/passwd")
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/redir/out", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://out-of-scope.invalid/")
		w.WriteHeader(http.StatusMovedPermanently)
	})
	mux.HandleFunc("/redir/nohost", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http:///x")
		w.WriteHeader(http.StatusFound)
	})
	for name, loc := range map[string]string{"hex": "http://0xa9fea9fe/", "dot": "http://169.254.169.254./", "mapped": "http://[::ffff:a9fe:a9fe]/"} {
		mux.HandleFunc("/redir/meta-"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusFound)
		})
	}
	mux.HandleFunc("/redir/meta", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://169.254.169.254/latest/meta-data/")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	// Each a Location no URL parser accepts: a final "bad redirect".
	for name, loc := range badLocations {
		mux.HandleFunc("/redir/bad/"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusFound)
		})
	}
	mux.HandleFunc("/slowheaders", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers; the client gives up
	})
	mux.HandleFunc("/drip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.WriteHeader(http.StatusOK)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	})
	return &httptest_{newServer(t, mux)}
}

// badLocations are malformed Location values, one per way url.Parse fails.
var badLocations = map[string]string{
	"bad-escape":      "/a%zz",
	"open-bracket":    "http://[::1/x",
	"bad-port":        "http://127.0.0.1:port/",
	"space-in-host":   "http://a b/",
	"escape-in-host":  "http://%41/",
	"colon-first":     "::",
	"bad-zone-escape": "http://[fe80::1%25%zz]/",
}

// httptest_ is a started server with a URL helper.
type httptest_ struct{ *httptest.Server }

func (s *httptest_) url(path string) string { return s.URL + path }

func TestFetchOutcomes(t *testing.T) {
	srv := outcomeServer(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	cfg := Config{
		MaxBody:      1 << 20,
		MaxRedirects: 5,
		Timeout:      testBound / 2, // generous: a loaded machine must not turn outcomes into timeouts
		InScope:      func(u *url.URL) bool { return u.Host == host || u.Hostname() == "169.254.169.254" },
	}
	c := newClient(t, cfg)
	// The timeout cases get their own client with short timeouts.
	cfg.Timeout, cfg.HeaderTimeout = 400*time.Millisecond, 300*time.Millisecond
	short := newClient(t, cfg)
	type test struct {
		name, path string
		wantBody   string // success: expected body prefix
		final      bool
		reason     string
		sentinel   error
		after      [2]time.Duration // RetryAfter range, inclusive
	}
	tests := []test{
		{name: "ok", path: "/ok", wantBody: "<html>"},
		{name: "sniffed content type", path: "/nocontenttype", wantBody: "<html>"},
		{name: "404 final", path: "/status/404", final: true, reason: "http 404", sentinel: ErrStatus},
		{name: "410 final", path: "/status/410", final: true, reason: "http 410", sentinel: ErrStatus},
		{name: "403 final", path: "/status/403", final: true, reason: "http 403", sentinel: ErrStatus},
		{name: "408 retryable", path: "/status/408", reason: "http 408", sentinel: ErrStatus},
		{name: "500 retryable", path: "/status/500", reason: "http 500", sentinel: ErrStatus},
		{name: "503 retryable", path: "/status/503", reason: "http 503", sentinel: ErrStatus},
		{name: "503 retry-after", path: "/503ra", reason: "http 503", after: [2]time.Duration{120 * time.Second, 120 * time.Second}},
		{name: "429 retry-after seconds", path: "/429s", reason: "http 429", after: [2]time.Duration{7 * time.Second, 7 * time.Second}},
		{name: "429 retry-after date", path: "/429d", reason: "http 429", after: [2]time.Duration{20 * time.Second, 30 * time.Second}},
		{name: "body over limit", path: "/big", final: true, reason: "body too large", sentinel: ErrTooLarge},
		{name: "chunked body over limit", path: "/bigchunked", final: true, reason: "body too large", sentinel: ErrTooLarge},
		{name: "gzip bomb", path: "/gzipbomb", final: true, reason: "body too large", sentinel: ErrTooLarge},
		{name: "zstd bomb", path: "/zstdbomb", final: true, reason: "body too large", sentinel: ErrTooLarge},
		{name: "brotli over limit", path: "/brbig", final: true, reason: "body too large", sentinel: ErrTooLarge},
		{name: "gzip", path: "/enc/gzip", wantBody: "<html>"},
		{name: "brotli", path: "/enc/br", wantBody: "<html>"},
		{name: "zstd", path: "/enc/zstd", wantBody: "<html>"},
		{name: "corrupt gzip", path: "/badgzip", reason: "bad encoding", sentinel: ErrEncoding},
		{name: "unknown encoding", path: "/weirdenc", final: true, reason: "bad encoding", sentinel: ErrEncoding},
		{name: "redirect followed", path: "/redir/ok", wantBody: "<html>"},
		{name: "redirect loop", path: "/loop/a", final: true, reason: "too many redirects", sentinel: ErrTooManyRedirects},
		{name: "redirect to file", path: "/redir/file", final: true, reason: "bad scheme", sentinel: ErrScheme},
		{name: "redirect out of scope", path: "/redir/out", final: true, reason: "redirect out of scope", sentinel: ErrOutOfScope},
		{name: "redirect to metadata", path: "/redir/meta", final: true, reason: "metadata address", sentinel: ErrMetadata},
		{name: "redirect to metadata in hex", path: "/redir/meta-hex", final: true, reason: "metadata address", sentinel: ErrMetadata},
		{name: "redirect to metadata with a trailing dot", path: "/redir/meta-dot", final: true, reason: "metadata address", sentinel: ErrMetadata},
		{name: "redirect to metadata IPv4-mapped", path: "/redir/meta-mapped", final: true, reason: "metadata address", sentinel: ErrMetadata},
		{name: "redirect to no host", path: "/redir/nohost", final: true, reason: "bad url", sentinel: ErrScheme},
		{name: "header timeout", path: "/slowheaders", reason: "timeout", sentinel: ErrTimeout},
		{name: "slow-drip body", path: "/drip", reason: "timeout", sentinel: ErrTimeout},
	}
	for name := range badLocations {
		tests = append(tests, test{name: "malformed Location " + name, path: "/redir/bad/" + name, final: true, reason: "bad redirect"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			client := c
			if tt.reason == "timeout" {
				client = short
			}
			resp, err := get(t, client, srv.url(tt.path))
			if took := time.Since(start); took > testBound {
				t.Errorf("took %v", took)
			}
			if tt.wantBody != "" {
				if err != nil {
					t.Fatalf("Fetch: %v", err)
				}
				if !bytes.HasPrefix(resp.Body, []byte(tt.wantBody)) || resp.Status != 200 || resp.ContentType != "text/html" {
					t.Fatalf("got %d %q %q", resp.Status, resp.ContentType, resp.Body)
				}
				if resp.URL.Path != "/ok" && !strings.HasPrefix(tt.path, "/enc/") && tt.path != "/nocontenttype" {
					t.Errorf("final URL %v", resp.URL)
				}
				return
			}
			if err == nil {
				t.Fatalf("Fetch succeeded (%d), want %q", resp.Status, tt.reason)
			}
			o := outcome(t, err)
			if o.Final() != tt.final || o.Reason() != tt.reason {
				t.Fatalf("err %v: final=%v reason=%q; want final=%v reason=%q", err, o.Final(), o.Reason(), tt.final, tt.reason)
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("err %v is not %v", err, tt.sentinel)
			}
			if ra := o.RetryAfter(); ra < tt.after[0] || ra > tt.after[1] {
				t.Errorf("RetryAfter %v, want in %v", ra, tt.after)
			}
		})
	}
}

func TestFetchConnectAndTLSTimeouts(t *testing.T) {
	tests := []struct {
		name string
		url  string
		cfg  Config
	}{
		{name: "connect", url: "http://" + fullListener(t) + "/", cfg: Config{ConnectTimeout: 200 * time.Millisecond}},
		{name: "tls handshake", url: "https://" + silentListener(t) + "/", cfg: Config{TLSTimeout: 200 * time.Millisecond}},
		{name: "whole request", url: "https://" + silentListener(t) + "/", cfg: Config{Timeout: 200 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, tt.cfg)
			start := time.Now()
			_, err := get(t, c, tt.url)
			if took := time.Since(start); took > testBound/2 {
				t.Errorf("took %v", took)
			}
			o := outcome(t, err)
			if o.Final() || o.Reason() != "timeout" || !errors.Is(err, ErrTimeout) {
				t.Fatalf("err %v: final=%v reason=%q; want a retryable timeout", err, o.Final(), o.Reason())
			}
		})
	}
}

func TestFetchMetadataRefused(t *testing.T) {
	c := newClient(t, Config{Timeout: time.Second})
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://[::ffff:169.254.169.254]/"} {
		_, err := get(t, c, u)
		if o := outcome(t, err); !o.Final() || o.Reason() != "metadata address" || !errors.Is(err, ErrMetadata) {
			t.Errorf("%s: %v, want metadata refused", u, err)
		}
	}
	// The dialer checks the resolved address, whatever name led to it.
	d := newDialer(Config{ConnectTimeout: time.Second})
	for _, addr := range []string{"169.254.169.254:80", "[::ffff:169.254.1.1]:80", "[fd00:ec2::254]:80"} {
		conn, err := d.DialContext(context.Background(), "tcp", addr)
		if err == nil {
			conn.Close()
		}
		if !errors.Is(err, ErrMetadata) {
			t.Errorf("dial %s: %v, want ErrMetadata", addr, err)
		}
	}
	// Loopback stays allowed, and AllowMetadata lifts the ban.
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	if _, err := get(t, c, srv.URL); err != nil {
		t.Fatalf("loopback: %v", err)
	}
	allow := newClient(t, Config{AllowMetadata: true, ConnectTimeout: 50 * time.Millisecond})
	if err := literalMetadataCheck(allow, "http://169.254.169.254/"); err != nil {
		t.Fatalf("AllowMetadata: %v", err)
	}
}

// literalMetadataCheck runs the pre-dial checks only (no packet leaves).
func literalMetadataCheck(c *Client, raw string) error {
	u, _ := url.Parse(raw)
	if !c.cfg.AllowMetadata && literalMetadata(u) {
		return ErrMetadata
	}
	return nil
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Proxies: proxyURLs("ftp://127.0.0.1:21")},
		{Proxies: proxyURLs("http://")},
		{PerHostRate: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted a bad config", cfg)
		}
	}
	if c, err := New(Config{Proxies: proxyURLs("socks5://127.0.0.1:1080", "http://127.0.0.1:3128")}); err != nil {
		t.Errorf("good proxies rejected: %v", err)
	} else {
		c.Close()
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"0", 0}, {"-5", 0}, {"garbage", 0}, {"42", 42 * time.Second},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"99999999999", maxRetryAfter},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestNoSecretInErrors: a fetch error shows neither the user information
// of the URL nor a secret-looking query value, whether the server answered
// (a status error) or not (a network error, whose cause quotes the URL).
func TestNoSecretInErrors(t *testing.T) {
	if _, err := New(Config{Proxies: proxyURLs("http://user:s3cret@127.0.0.1:%zz")}); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("proxy error %v", err)
	}
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) }))
	closed := newServer(t, http.NotFoundHandler())
	closed.Close()
	c := newClient(t, Config{})
	for _, base := range []string{srv.URL, closed.URL} {
		host := strings.TrimPrefix(base, "http://")
		for _, u := range []string{
			"http://user:s3cret@" + host + "/x",
			"http://s3cret@" + host + "/x",
			"http://" + host + "/x?api_key=s3cret",
			"http://" + host + "/x?id=1&access_token=s3cret#top",
		} {
			_, err := get(t, c, u)
			if err == nil || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("GET %s: error %v", u, err)
			}
		}
	}
}

func TestHead(t *testing.T) {
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1234")
		w.Header().Set("Content-Type", "application/pdf")
	}))
	c := newClient(t, Config{})
	req, _ := http.NewRequest(http.MethodHead, srv.URL, nil)
	resp, err := c.Fetch(context.Background(), req)
	if err != nil || resp.Status != 200 || len(resp.Body) != 0 || resp.ContentType != "application/pdf" {
		t.Fatalf("HEAD: %+v, %v", resp, err)
	}
}

func TestHTTPS(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, r.Proto)
		}))
		srv.EnableHTTP2 = h2
		srv.StartTLS()
		t.Cleanup(srv.Close)
		c := newClient(t, Config{TLS: srv.Client().Transport.(*http.Transport).TLSClientConfig})
		resp, err := get(t, c, srv.URL+"/")
		if err != nil {
			t.Fatalf("h2=%v: %v", h2, err)
		}
		if want := map[bool]string{false: "HTTP/1.1", true: "HTTP/2.0"}[h2]; string(resp.Body) != want {
			t.Fatalf("h2=%v: served over %s", h2, resp.Body)
		}
	}
	// Without the test CA the certificate is refused, as a retryable
	// network error (a site can fix its certificate).
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	_, err := get(t, newClient(t, Config{}), srv.URL)
	if o := outcome(t, err); o.Reason() != "network" {
		t.Fatalf("untrusted certificate: %v", err)
	}
}
