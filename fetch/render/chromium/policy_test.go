package chromium

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/render"
	"github.com/distscrape/distscrape/internal/testkit/recorder"
	"github.com/distscrape/distscrape/test/fixturesite"
)

// netnsEnv is set in the copy of the test run inside a network namespace.
const netnsEnv = "DISTSCRAPE_RENDER_NETNS"

// metadataSpellings are the cloud metadata address as a page may write it.
var metadataSpellings = []string{
	"http://169.254.169.254/latest/meta-data/",
	"http://2852039166/",
	"http://0xa9fea9fe/",
	"http://169.254.43518/",
	"http://[::ffff:169.254.169.254]/",
	"http://metadata.google.internal/computeMetadata/v1/",
}

// TestRenderHostilePage: a page's script fetches, XHRs, beacons, and
// loads as image, iframe, WebSocket, EventSource and from a worker the
// metadata address (in every spelling) and an out-of-scope host: none of
// it reaches a server, while the same page's in-scope requests do (the
// control that the page did run and ask). Inside a network namespace
// (TestRenderHostilePageNetns) the metadata address is also a live
// server on the loopback that must see nothing.
func TestRenderHostilePage(t *testing.T) {
	meta := new(atomic.Int64)
	if os.Getenv(netnsEnv) != "" {
		meta = listenMetadata(t)
	}
	tb := setup(t, nil)
	offsite := recorder.Start(t, nil)
	control := fixturesite.JSImagePrefix + "control.png"
	targets := append([]string{offsite.URL + "/stolen", tb.site.URL() + control}, metadataSpellings...)
	q := url.Values{"to": targets}
	p, err := tb.render(t, fixturesite.JSHostilePath+"?"+q.Encode(), render.Rule{WaitFor: render.NetworkIdle})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(p.Response.Body), `data-ran="yes"`) {
		t.Fatalf("the page's script did not run:\n%s", p.Response.Body)
	}
	if n := tb.site.Requests(control); n == 0 {
		t.Fatal("the in-scope control URL was never requested: the page asked nothing, the test proves nothing")
	}
	if seen := offsite.Seen(); len(seen) > 0 {
		t.Errorf("the out-of-scope host got requests: %q", seen)
	}
	if n := meta.Load(); n > 0 {
		t.Errorf("the metadata address got %d requests", n)
	}
}

// listenMetadata puts 169.254.169.254 on the namespace's loopback and
// counts what reaches port 80 there.
func listenMetadata(t *testing.T) *atomic.Int64 {
	t.Helper()
	for _, args := range [][]string{{"link", "set", "lo", "up"}, {"addr", "add", "169.254.169.254/32", "dev", "lo"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	ln, err := net.Listen("tcp", "169.254.169.254:80")
	if err != nil {
		t.Fatal(err)
	}
	n := new(atomic.Int64)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = w.Write([]byte("secret"))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	// The server is live: a direct request from here reaches it.
	resp, err := http.Get("http://169.254.169.254/probe")
	if err != nil {
		t.Fatalf("the metadata listener is not reachable: %v", err)
	}
	resp.Body.Close()
	n.Store(0)
	return n
}

// hostileTests are the tests of what a hostile page may try (issue 33's
// among them): TestRenderHostilePageNetns runs each again inside a
// network namespace.
var hostileTests = []string{
	"TestRenderHostilePage", "TestRenderSubresourceScope",
	"TestRenderTopFrameNavigation", "TestRenderDelayedNavigation", "TestRenderNavigationLoop",
	"TestRenderNoDownloads", "TestRenderDialogs", "TestRenderHttpOnlyCookieHidden", "TestRenderTallPage",
}

// TestRenderHostilePageNetns runs hostileTests again in a new network
// namespace (unshare -n, as root; its loopback brought up) where
// 169.254.169.254 answers (TestRenderHostilePage): whatever leaked would
// be counted, and no packet can leave the machine.
func TestRenderHostilePageNetns(t *testing.T) {
	browserOrSkip(t)
	if os.Getenv(netnsEnv) != "" {
		t.Skip("already inside the namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and unshare(1) for a network namespace")
	}
	run := "^(" + strings.Join(hostileTests, "|") + ")$"
	cmd := exec.Command(unshare, "-n", "sh", "-c", `ip link set lo up && exec "$@"`, "sh",
		os.Args[0], "-test.run="+run, "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in the namespace: %v\n%s", err, out)
	}
	for _, name := range hostileTests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("in the namespace, %s did not pass:\n%s", name, out)
		}
	}
}

// TestRenderPerHostConcurrency: the images of rendered pages take the
// client's per-host slots like any fetch: two pages of 30 slow images
// rendered at once never have more than the limit in flight at the site.
func TestRenderPerHostConcurrency(t *testing.T) {
	const limit = 2
	tb := setup(t, func(f *fetch.Config, c *Config) { f.PerHostConcurrency = limit; c.Concurrency = 2 })
	tb.site.SetLatency(20_000_000) // 20ms a request: they overlap
	tb.site.ResetLog()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			_, err := tb.render(t, fixturesite.JSManyPath+"?n=30", render.Rule{WaitFor: render.NetworkIdle})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	host := tb.site.Host()
	if got := tb.site.MaxInFlight(host); got > limit || got < 1 {
		t.Errorf("max in flight at the site %d, limit %d", got, limit)
	}
	if n := tb.site.Requests(fixturesite.JSImagePrefix + "29.png"); n == 0 {
		t.Error("the images were not requested: nothing was bounded")
	}
}

// TestRenderSubresourcesWaitForTheirHost: a page's images are no tracker
// items and cannot be handed back, so they wait for their host's slot
// however short fetch.max_host_wait is (bounded by the page's timeout),
// instead of failing and leaving the rendered page without them.
func TestRenderSubresourcesWaitForTheirHost(t *testing.T) {
	const images = 30
	tb := setup(t, func(f *fetch.Config, c *Config) { f.PerHostConcurrency = 1; f.MaxHostWait = time.Millisecond })
	tb.site.SetLatency(20 * time.Millisecond) // each image holds the one slot for 20ms
	tb.site.ResetLog()
	if _, err := tb.render(t, fmt.Sprintf("%s?n=%d", fixturesite.JSManyPath, images), render.Rule{WaitFor: render.NetworkIdle}); err != nil {
		t.Fatal(err)
	}
	var missing []int
	for i := range images {
		if tb.site.Requests(fmt.Sprintf("%s%d.png", fixturesite.JSImagePrefix, i)) == 0 {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		t.Errorf("images %v never reached the site: they gave up waiting for the host's slot", missing)
	}
	if got := tb.site.MaxInFlight(tb.site.Host()); got != 1 {
		t.Errorf("max in flight at the site %d, want the limit, 1", got)
	}
}

// TestRenderOutOfScopeSubresources: with SubresourceInScope allowing any
// host, the static subresources of a page go through (still through Go),
// while its scripts' requests stay in InScope.
func TestRenderSubresourceScope(t *testing.T) {
	offsite := recorder.Start(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("x"))
	})
	tb := setup(t, func(f *fetch.Config, c *Config) { c.SubresourceInScope = func(*url.URL) bool { return true } })
	q := url.Values{"to": {offsite.URL + "/cdn"}}
	if _, err := tb.render(t, fixturesite.JSHostilePath+"?"+q.Encode(), render.Rule{WaitFor: render.NetworkIdle}); err != nil {
		t.Fatal(err)
	}
	// The image is static: allowed; fetch/XHR/beacon/iframe/EventSource are
	// not; WebSocket and the worker never reach the Fetch domain's answer.
	var seen []string
	for _, s := range offsite.Seen() {
		if !strings.HasSuffix(s, "/robots.txt") { // asked first, as for any fetch
			seen = append(seen, s)
		}
	}
	if len(seen) != 1 || seen[0] != "GET "+offsite.Listener.Addr().String()+"/cdn" {
		t.Errorf("offsite saw %q, want exactly the image", seen)
	}
}
