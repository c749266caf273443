package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The broad crawl (issue 32): many small hosts and one big one, all on this
// machine as 127.x.y.z addresses of one port, each host allowed rate
// requests/s. Every crawler is measured by the site: pages/s while small
// hosts still have work, against the politeness bound (hosts with work ×
// rate, the crawl's concurrency being far above it here), the time until
// every small host is done against the ideal (its pages at the rate after
// its root), and politeness violations (two requests to one host less than
// 0.9 of an interval apart).

type broadParams struct {
	hosts, pagesPer, bigPages int
	rate                      float64
	conc                      int
	limit                     time.Duration
}

// broadSite serves the hosts and stamps every request.
type broadSite struct {
	p     broadParams
	port  int
	small []string // host:port of each small host
	big   string
	lns   []net.Listener
	srv   *http.Server

	mu        sync.Mutex
	last      map[string]time.Time
	count     map[string]int
	first     time.Time
	total     int
	smallDone int
	allSmall  time.Time // when the last small host got its last page
	violation int
	minGap    time.Duration
}

func hostAddr(i int) string { return fmt.Sprintf("127.1.%d.%d", i/250, 1+i%250) }

func startBroadSite(p broadParams) (*broadSite, error) {
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := probe.Addr().(*net.TCPAddr).Port
	probe.Close()
	s := &broadSite{p: p, port: port, last: map[string]time.Time{}, count: map[string]int{}}
	s.srv = &http.Server{Handler: s}
	listen := func(addr string) (string, error) {
		hp := fmt.Sprintf("%s:%d", addr, port)
		ln, err := net.Listen("tcp", hp)
		if err != nil {
			return "", fmt.Errorf("broad site: %w", err)
		}
		s.lns = append(s.lns, ln)
		go s.srv.Serve(ln)
		return hp, nil
	}
	for i := range p.hosts {
		hp, err := listen(hostAddr(i))
		if err != nil {
			s.close()
			return nil, err
		}
		s.small = append(s.small, hp)
	}
	if s.big, err = listen("127.2.0.1"); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *broadSite) close() { _ = s.srv.Close() }

func (s *broadSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		http.NotFound(w, r)
		return
	}
	host, now := r.Host, time.Now()
	n := s.p.pagesPer - 1
	if host == s.big {
		n = s.p.bigPages
	}
	s.mu.Lock()
	if s.first.IsZero() {
		s.first = now
	}
	iv := time.Duration(float64(time.Second) / s.p.rate)
	if prev, ok := s.last[host]; ok {
		gap := now.Sub(prev)
		if gap < iv*9/10 {
			s.violation++
		}
		if s.minGap == 0 || gap < s.minGap {
			s.minGap = gap
		}
	}
	s.last[host] = now
	s.count[host]++
	s.total++
	if host != s.big && s.count[host] == s.p.pagesPer {
		s.smallDone++
		if s.smallDone == s.p.hosts {
			s.allSmall = now
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html")
	io.WriteString(w, "<html><body><p>page</p>")
	if r.URL.Path == "/" {
		for i := 1; i <= n; i++ {
			fmt.Fprintf(w, `<a href="/p/%d">%d</a> `, i, i)
		}
	}
	io.WriteString(w, "</body></html>")
}

// seeds are the roots, the big host's pages first when bigFirst.
func (s *broadSite) seeds(bigFirst bool) []string {
	var out []string
	if bigFirst {
		out = append(out, "http://"+s.big+"/")
		for i := 1; i <= s.p.bigPages; i++ {
			out = append(out, fmt.Sprintf("http://%s/p/%d", s.big, i))
		}
	}
	for _, h := range s.small {
		out = append(out, "http://"+h+"/")
	}
	if !bigFirst {
		out = append(out, "http://"+s.big+"/")
	}
	return out
}

// broadResult is one run's figures.
type broadResult struct {
	name       string
	pagesPerS  float64 // over the broad phase
	bound      float64
	smallDone  time.Duration // from the first request; 0: not all within the limit
	doneHosts  int
	violations int
	minGap     time.Duration // the shortest gap between two requests to one host
	cpu        time.Duration
}

// snapshot waits until every small host is done or the limit passes.
func (s *broadSite) wait(limit time.Duration) broadResult {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		done := !s.allSmall.IsZero()
		s.mu.Unlock()
		if done {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	end := s.allSmall
	if end.IsZero() {
		end = time.Now()
	}
	r := broadResult{bound: float64(s.p.hosts+1) * s.p.rate, doneHosts: s.smallDone, violations: s.violation, minGap: s.minGap}
	if d := end.Sub(s.first); d > 0 {
		r.pagesPerS = float64(s.total) / d.Seconds()
	}
	if !s.allSmall.IsZero() {
		r.smallDone = s.allSmall.Sub(s.first)
	}
	return r
}

func broadMain(args []string) error {
	fs := flag.NewFlagSet("broad", flag.ContinueOnError)
	var p broadParams
	bin := fs.String("distscrape", "bin/distscrape", "the distscrape binary")
	fs.IntVar(&p.hosts, "hosts", 2000, "small hosts")
	fs.IntVar(&p.pagesPer, "pages", 21, "pages per small host (its root included)")
	fs.IntVar(&p.bigPages, "big", 5000, "pages of the big host")
	fs.Float64Var(&p.rate, "rate", 2, "requests/s per host")
	fs.IntVar(&p.conc, "concurrency", 64, "requests in flight per crawler")
	fs.DurationVar(&p.limit, "limit", 180*time.Second, "longest run of each variant")
	only := fs.String("only", "", "run only this variant (memory, memory-big-first, redis, redis-big-first, colly, colly-big-first)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	bin2, err := filepath.Abs(*bin)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ideal := time.Duration(float64(p.pagesPer-1) / p.rate * float64(time.Second))
	fmt.Printf("## Broad crawl: %d hosts × %d pages + one host of %d, %.0f req/s per host, concurrency %d\n\n",
		p.hosts, p.pagesPer, p.bigPages, p.rate, p.conc)
	fmt.Printf("| variant | pages/s (broad phase) | bound | ratio | small hosts done | ideal | ratio | violations (< 0.9 interval) | shortest gap | CPU s |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, v := range []string{"memory", "memory-big-first", "redis", "redis-big-first", "colly", "colly-big-first"} {
		if *only != "" && *only != v {
			continue
		}
		r, err := runBroad(v, bin2, self, p)
		if err != nil {
			return fmt.Errorf("%s: %w", v, err)
		}
		done := "not all in " + p.limit.String()
		ratio := "–"
		if r.smallDone > 0 {
			done = r.smallDone.Round(100 * time.Millisecond).String()
			ratio = fmt.Sprintf("%.2f", r.smallDone.Seconds()/ideal.Seconds())
		}
		fmt.Printf("| %s | %.0f | %.0f | %.2f | %s (%d of %d) | %s | %s | %d | %s | %.1f |\n", v, r.pagesPerS, r.bound, r.pagesPerS/r.bound,
			done, r.doneHosts, p.hosts, ideal, ratio, r.violations, r.minGap.Round(time.Millisecond), r.cpu.Seconds())
	}
	return nil
}

// runBroad runs one variant against a fresh site.
func runBroad(variant, bin, self string, p broadParams) (broadResult, error) {
	s, err := startBroadSite(p)
	if err != nil {
		return broadResult{}, err
	}
	defer s.close()
	dir, err := os.MkdirTemp("", "broad-")
	if err != nil {
		return broadResult{}, err
	}
	defer os.RemoveAll(dir)
	seeds := s.seeds(strings.HasSuffix(variant, "big-first"))
	var procs []*exec.Cmd
	start := func(name string, args ...string) error {
		c := exec.Command(name, args...)
		c.Dir, c.Stdout, c.Stderr = dir, io.Discard, os.Stderr
		procs = append(procs, c)
		return c.Start()
	}
	var cleanup func()
	switch {
	case strings.HasPrefix(variant, "colly"):
		f := filepath.Join(dir, "seeds.txt")
		if err := os.WriteFile(f, []byte(strings.Join(seeds, "\n")), 0o644); err != nil {
			return broadResult{}, err
		}
		if err := start(self, "broad-colly", "-seeds", f, "-rate", fmt.Sprint(p.rate), "-parallelism", fmt.Sprint(p.conc)); err != nil {
			return broadResult{}, err
		}
	default:
		tracker := "tracker: {kind: memory, batch: 32}"
		if strings.HasPrefix(variant, "redis") {
			rs, err := startRedis(context.Background(), dir)
			if err != nil {
				return broadResult{}, err
			}
			cleanup = rs.stop
			tracker = fmt.Sprintf("tracker: {kind: redis, url: %q, batch: 32}", "redis://"+rs.addr())
		}
		quoted := make([]string, len(seeds))
		for i, u := range seeds {
			quoted[i] = fmt.Sprintf("%q", u)
		}
		cfg := fmt.Sprintf("crawl: broad\n%s\nscraper: {kind: link, seeds: [%s], link_regex: 'href=\"([^\"]+)\"'}\n"+
			"fetch: {concurrency: %d, per_host_concurrency: 1, per_host_rate: %v, robots: false, timeout: 10s}\nsaver: {kind: none}\nlog: {level: warn}\n",
			tracker, strings.Join(quoted, ", "), p.conc, p.rate)
		path := filepath.Join(dir, "crawl.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			return broadResult{}, err
		}
		if strings.HasPrefix(variant, "redis") {
			seed := exec.Command(bin, "seed", "-c", path)
			seed.Dir = dir
			if out, err := seed.CombinedOutput(); err != nil {
				return broadResult{}, fmt.Errorf("seed: %v: %s", err, out)
			}
			for i := range 2 {
				if err := start(bin, "worker", "-c", path, "--id", fmt.Sprintf("w%d", i)); err != nil {
					return broadResult{}, err
				}
			}
		} else if err := start(bin, "crawl", "-c", path); err != nil {
			return broadResult{}, err
		}
	}
	r := s.wait(p.limit)
	r.name = variant
	for _, c := range procs {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range procs {
		_ = c.Wait()
		if c.ProcessState != nil {
			r.cpu += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
		}
	}
	if cleanup != nil {
		cleanup()
	}
	return r, nil
}
