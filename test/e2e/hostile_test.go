package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/recorder"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// hostileNetnsEnv is set in the copy of the test run inside a network
// namespace, where 169.254.169.254 is a live server on the loopback.
const hostileNetnsEnv = "DISTSCRAPE_E2E_HOSTILE_NETNS"

// metadataURLs are the cloud metadata address as a page may write it.
var metadataURLs = []string{
	"http://169.254.169.254/latest/meta-data/",
	"http://2852039166/",
	"http://0xa9fea9fe/",
	"http://169.254.43518/",
	"http://[::ffff:169.254.169.254]/",
	"http://metadata.google.internal/computeMetadata/v1/",
}

// TestHostilePageThroughBinary: a rendered page whose script asks for
// the metadata address (every spelling) and an out-of-scope host by
// fetch, XHR, beacon, image, iframe, WebSocket, EventSource and a worker,
// crawled by the binary: the out-of-scope host's recording server sees
// nothing, while the page's in-scope control image is fetched (the
// script ran). Inside the namespace of TestHostilePageThroughBinaryNetns
// the metadata address is a live server that must see nothing too.
func TestHostilePageThroughBinary(t *testing.T) {
	browserOrSkip(t)
	var meta *atomic.Int64
	if os.Getenv(hostileNetnsEnv) != "" {
		meta = metadataServer(t)
	}
	site := fixturesite.Start(t, fixturesite.Options{})
	offsite := recorder.Start(t, nil)
	control := fixturesite.JSImagePrefix + "control.png"
	q := url.Values{"to": append([]string{offsite.URL + "/stolen", site.URL() + control}, metadataURLs...)}
	hostile := site.URL() + fixturesite.JSHostilePath + "?" + q.Encode()
	dir := t.TempDir()
	cfg := crawlConfig{
		Tracker: "tracker: {kind: memory, max_attempts: 2, backoff: {base: 10ms, max: 20ms}}",
		Scraper: fmt.Sprintf("scraper: {kind: link, seeds: [%q], requisites: false, scope: {prefixes: [%q]}}", hostile, site.URL()+fixturesite.JSPrefix),
		Fetch: `fetch:
  timeout: 10s
  render: [{match: '/js/hostile', wait_for: network idle, timeout: 60s}]`,
		Saver: "saver: {kind: file, dir: out, layout: mirror}",
	}.write(t, dir)
	r := testbin.Cmd{Dir: dir}.Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress")
	if r.Code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	body, ok := savedBody(t, filepath.Join(dir, "out"), hostile)
	if !ok || !strings.Contains(body, `data-ran="yes"`) {
		t.Fatalf("the hostile page's script did not run (saved %v):\n%.500s", ok, body)
	}
	if n := site.Requests(control); n == 0 {
		t.Fatal("the in-scope control URL was never requested: the page asked nothing, the test proves nothing")
	}
	if seen := offsite.Seen(); len(seen) > 0 {
		t.Errorf("the out-of-scope host got requests: %q", seen)
	}
	if meta != nil {
		if n := meta.Load(); n > 0 {
			t.Errorf("the metadata address got %d requests", n)
		}
	}
}

// hostileBinaryTests are the browser tests through the binary that
// TestHostilePageThroughBinaryNetns runs again inside a network
// namespace.
var hostileBinaryTests = []string{
	"TestHostilePageThroughBinary", "TestBrowserLoginRefused", "TestRenderTallPageKeepsBody", "TestScriptCookieRendered",
}

// TestHostilePageThroughBinaryNetns runs hostileBinaryTests again in a
// new network namespace (unshare -n, its loopback brought up) where
// 169.254.169.254 is a server on the loopback (TestHostilePageThroughBinary):
// whatever leaked would be counted, and no packet can leave the machine.
// It skips where unshare is not permitted, except in CI.
func TestHostilePageThroughBinaryNetns(t *testing.T) {
	browserOrSkip(t)
	if os.Getenv(hostileNetnsEnv) != "" {
		t.Skip("already inside the namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err == nil {
		if out, uerr := exec.Command(unshare, "-n", "true").CombinedOutput(); uerr != nil {
			err = fmt.Errorf("unshare -n: %v: %s", uerr, strings.TrimSpace(string(out)))
		}
	}
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("a network namespace is not permitted here (%v): run as root with unshare(1); CI fails here instead", err)
		}
		t.Fatalf("CI: a network namespace is needed for the metadata server: %v", err)
	}
	testbin.Build(t) // warms the build cache: the copy inside builds again, offline
	run := "^(" + strings.Join(hostileBinaryTests, "|") + ")$"
	cmd := exec.Command(unshare, "-n", "sh", "-c", `ip link set lo up && exec "$@"`, "sh",
		os.Args[0], "-test.run="+run, "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), hostileNetnsEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in the namespace: %v\n%s", err, out)
	}
	for _, name := range hostileBinaryTests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("in the namespace, %s did not pass:\n%s", name, out)
		}
	}
}

// metadataServer brings the namespace's loopback up, puts 169.254.169.254
// on it, and counts the requests reaching port 80 there.
func metadataServer(t *testing.T) *atomic.Int64 {
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
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://169.254.169.254/probe")
	if err != nil {
		t.Fatalf("the metadata server is not reachable: %v", err)
	}
	resp.Body.Close()
	if n.Load() != 1 {
		t.Fatalf("the probe was not counted")
	}
	n.Store(0)
	return n
}
