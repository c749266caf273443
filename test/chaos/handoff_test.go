package chaos

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/testbin"
)

// treeSite is a site of hosts × per pages where every page but the root
// has exactly one parent, on another host: a page whose discovery is lost
// is never fetched, whatever else the crawl does. Page n lives on host
// n % hosts at /p/n.html; it links to its children only.
type treeSite struct {
	srvs     []*httptest.Server
	n        int
	children [][]int
	fetched  []atomic.Int64 // per page, the GETs served
	latency  time.Duration  // per response: keeps the crawl running through the fault
}

func startTreeSite(t *testing.T, hosts, per int, latency time.Duration) *treeSite {
	s := &treeSite{n: hosts * per}
	s.children = make([][]int, s.n)
	s.fetched = make([]atomic.Int64, s.n)
	for n := 1; n < s.n; n++ {
		p := (n - 1) / 3
		if p%hosts == n%hosts {
			p-- // its neighbour is on another host (and still before n)
		}
		s.children[p] = append(s.children[p], n)
	}
	for range hosts {
		srv := httptest.NewServer(http.HandlerFunc(s.serve))
		t.Cleanup(srv.Close)
		s.srvs = append(s.srvs, srv)
	}
	s.latency = latency
	return s
}

func (s *treeSite) url(n int) string {
	return s.srvs[n%len(s.srvs)].URL + "/p/" + strconv.Itoa(n) + ".html"
}

func (s *treeSite) serve(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/p/"), ".html"))
	if err != nil || n < 0 || n >= s.n || s.url(n) != "http://"+r.Host+r.URL.Path {
		http.NotFound(w, r)
		return
	}
	s.fetched[n].Add(1)
	time.Sleep(s.latency)
	var b strings.Builder
	fmt.Fprintf(&b, "<html><body><h1>page %d</h1>\n", n)
	for _, c := range s.children[n] {
		fmt.Fprintf(&b, "<a href=\"%s\">%d</a>\n", s.url(c), c)
	}
	b.WriteString("</body></html>\n")
	w.Header().Set("Content-Type", "text/html")
	w.Write([]byte(b.String()))
}

// seen is the number of distinct pages fetched so far.
func (s *treeSite) seen() int {
	k := 0
	for i := range s.fetched {
		if s.fetched[i].Load() > 0 {
			k++
		}
	}
	return k
}

func (s *treeSite) hosts() []string {
	var hs []string
	for _, srv := range s.srvs {
		hs = append(hs, strconv.Quote(strings.TrimPrefix(srv.URL, "http://")))
	}
	return hs
}

// TestChaosHandoffFailover: no discovery is lost when the master of the
// partition it was handed to fails over with a replica that lagged.
//
// 3 masters and 3 replicas, 6 partitions, a one-parent tree site of 4
// hosts × 300 pages (each page's one parent is on another host, so nearly
// every discovery crosses partitions). Mid-crawl, the master holding the
// most of the crawl gets its replica behind a relay; the relay stalls the
// replication link for 6 s, then the master is SIGKILLed: its replica
// takes over without the writes of those 6 s. Every page must end
// fetched or failed.
func TestChaosHandoffFailover(t *testing.T) {
	const hosts, per, workers = 4, 300, 2
	site := startTreeSite(t, hosts, per, 40*time.Millisecond)
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Replicas: true})
	dir := t.TempDir()
	cfg := writeConfig(t, dir,
		"crawl: handoff",
		fmt.Sprintf("tracker: {kind: redis, url: %q, partitions: 6, lease_ttl: %s, batch: %d, max_attempts: 12, backoff: {base: 200ms, max: 1s}}",
			cl.URL(), leaseTTL, fleetBatch),
		fmt.Sprintf("scraper: {kind: link, seeds: [%q], link_regex: 'href=\"([^\"]+)\"', scope: {hosts: [%s]}}",
			site.url(0), strings.Join(site.hosts(), ", ")),
		"fetch: {concurrency: 4, per_host_concurrency: 8, timeout: 10s}",
		"saver: {kind: file, dir: out, layout: mirror}",
		"log: {level: warn}")
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	var ws []*testbin.Proc
	for i := range workers {
		ws = append(ws, cmd.Start(t, "worker", "-c", cfg, "--id", fmt.Sprintf("w%d", i)))
	}
	testbin.WaitFor(t, 2*time.Minute, "60 pages fetched", func() bool { return site.seen() >= 60 })

	// The master with the most keys holds the most partitions in use.
	var victim *redistest.Server
	var replica *redistest.Server
	var most int64
	for i, m := range cl.Masters {
		n, _ := m.Client(t).DBSize(t.Context()).Result()
		if n > most {
			victim, most = m, n
			replica = replicaOf(t, cl, i)
		}
	}
	if victim == nil || replica == nil {
		t.Fatal("no master with a replica holds the crawl")
	}
	rl, err := startRelay(victim.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rl.Close)
	// The master announces the relay: its replica (and the clients) reach
	// it through the relay from now on.
	if err := victim.Client(t).ConfigSet(t.Context(), "cluster-announce-port", strconv.Itoa(rl.port())).Err(); err != nil {
		t.Fatal(err)
	}
	rc := replica.Client(t)
	testbin.WaitFor(t, time.Minute, "the replica to replicate through the relay", func() bool {
		info, err := rc.Info(t.Context(), "replication").Result()
		return err == nil && strings.Contains(info, "master_port:"+strconv.Itoa(rl.port())+"\r\n") &&
			strings.Contains(info, "master_link_status:up")
	})
	if site.seen() >= site.n {
		t.Fatal("the crawl ended before the fault: slow the site down")
	}
	at := site.seen()
	rl.stall()
	stallEnd := time.Now().Add(6 * time.Second)
	testbin.WaitFor(t, 10*time.Second, "the 6 s stall", func() bool { return !time.Now().Before(stallEnd) })
	during := site.seen() - at
	victim.Kill()
	rl.Close()

	for _, w := range ws {
		if r := w.Wait(t, 3*time.Minute); r.Code != 0 || crashed(r.Stderr) {
			t.Errorf("worker %s: %s", w.Name, r)
		}
	}
	failed := map[string]bool{}
	for _, k := range failedKeys(t, cmd, cfg) {
		failed[k] = true
	}
	var lost []int
	for n := range site.n {
		if site.fetched[n].Load() == 0 && !failed[site.url(n)] {
			lost = append(lost, n)
		}
	}
	st := status(t, cmd, cfg)
	t.Logf("%d pages: %d fetched before the stall, %d during it; master %s (%d keys) killed; %d failed, %d lost; tracker %+v",
		site.n, at, during, victim.Addr(), most, len(failed), len(lost), st)
	if len(lost) > 0 {
		t.Errorf("%d of %d pages never fetched nor failed (lost discoveries): %v", len(lost), site.n, lost[:min(len(lost), 20)])
	}
}

// replicaOf is master i's replica (redis-cli --cluster create pairs them
// in its own order: asked to each replica).
func replicaOf(t *testing.T, cl *redistest.Cluster, i int) *redistest.Server {
	want := ":" + strconv.Itoa(cl.Masters[i].Port) + "\r\n"
	for _, r := range cl.Replicas {
		info, err := r.Client(t).Info(t.Context(), "replication").Result()
		if err == nil && strings.Contains(info, "master_port"+want) {
			return r
		}
	}
	return nil
}
