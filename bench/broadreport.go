package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// broadParams are the broad crawl's settings, shared by every run.
type broadParams struct {
	smallHosts, smallPages, bigPages int
	rate                             float64       // fetch.per_host_rate, requests/s per host
	conc                             int           // requests in flight per crawler (the fleet's total)
	latency                          time.Duration // the server's latency per request
	tolerance                        time.Duration // a gap this much shorter than 1/rate is still polite
	perEgress                        bool          // politeness per egress (per_host_scope worker), not per host
}

func (p broadParams) interval() time.Duration { return time.Duration(float64(time.Second) / p.rate) }

// ideal is the least time from the first request until every small host
// is done: a host's last page goes out (pages−1)/rate after its root and
// takes one latency; and the small hosts' pages, latency each, through
// conc requests in flight.
func (p broadParams) ideal() time.Duration {
	polite := time.Duration(float64(p.smallPages)/p.rate*float64(time.Second)) + p.latency
	busy := time.Duration(int64(p.smallHosts*(p.smallPages+1)) * int64(p.latency) / int64(p.conc))
	return max(polite, busy)
}

// bound is the most pages/s a polite crawler can fetch over a window of
// length t from the start of the broad phase: each of the hosts with work
// (all small hosts and the big one) allows one request at once and rate
// per second after, (1 + rate·t)/t per second; and conc requests in
// flight that take latency each allow conc/latency per second.
func (p broadParams) bound(t time.Duration) float64 {
	hosts := float64(p.smallHosts+1) * (p.rate + 1/t.Seconds())
	if p.latency <= 0 {
		return hosts
	}
	return math.Min(hosts, float64(p.conc)/p.latency.Seconds())
}

// broadResult is one run of one crawler on one variant, read off the site's log.
type broadResult struct {
	crawler, variant string
	wall             time.Duration // the run, from the crawler's start to its stop
	exit             time.Duration // from the stop (SIGINT) until the crawler's processes exited
	afterStop        int           // requests between the stop and the exit
	stopped          string        // why the run stopped: "small hosts done", "finished" or "cap"
	cpu              time.Duration // the crawler's processes and redis-server

	phase      time.Duration // the broad phase: from the first request until every small host was done (or the end)
	allSmall   bool          // every small host was done
	smallDone  int           // small hosts done
	phasePages int           // pages first fetched in the broad phase
	spans      []time.Duration
	rootsAt    time.Duration // when the last small host's root was fetched (-1: not all were)
	bigInPhase int           // the big host's pages fetched in the broad phase
	bigTotal   int
	pages      int // pages fetched until the stop
	requests   int
	dups       int
	violations int
	minGap     time.Duration // the shortest gap between two requests to one host (per egress)
}

// analyse reads a run's log; requests after stopAt (the crawler shutting
// down) count for politeness only.
func analyse(p broadParams, s *broadSite, log []hit, stopAt time.Duration) broadResult {
	var r broadResult
	r.requests = len(log)
	if len(log) == 0 {
		return r
	}
	first := log[0].at
	hosts := s.smallHosts + 1
	rootAt := make([]time.Duration, hosts)
	doneAt := make([]time.Duration, hosts)
	left := make([]int, hosts)
	for i := range hosts {
		left[i] = s.pages(i)
		rootAt[i] = -1
	}
	seen := make([]bool, len(s.seen))
	type key struct {
		host   int32
		egress string
	}
	last := map[key]time.Duration{}
	r.minGap = -1
	limit := p.interval() - p.tolerance
	var firsts []time.Duration // first fetch times of pages, in log order
	var bigFirsts []time.Duration
	for _, h := range log {
		k := key{host: h.host}
		if p.perEgress {
			k.egress = h.egress
		}
		if prev, ok := last[k]; ok {
			gap := h.at - prev
			if gap < limit {
				r.violations++
			}
			if r.minGap < 0 || gap < r.minGap {
				r.minGap = gap
			}
		}
		last[k] = h.at
		if h.at > stopAt {
			r.afterStop++
			continue
		}
		if h.page < 0 {
			continue
		}
		i := s.offset[h.host] + int(h.page)
		if seen[i] {
			r.dups++
			continue
		}
		seen[i] = true
		r.pages++
		firsts = append(firsts, h.at)
		if int(h.host) == s.bigHost() {
			bigFirsts = append(bigFirsts, h.at)
		}
		if h.page == 0 {
			rootAt[h.host] = h.at
		}
		left[h.host]--
		if left[h.host] == 0 {
			doneAt[h.host] = h.at
		}
	}
	end := min(log[len(log)-1].at, stopAt)
	phaseEnd := time.Duration(0)
	for i := range s.smallHosts {
		if left[i] == 0 {
			r.smallDone++
			phaseEnd = max(phaseEnd, doneAt[i])
			r.spans = append(r.spans, doneAt[i]-rootAt[i])
		}
	}
	r.allSmall = r.smallDone == s.smallHosts
	r.rootsAt = 0
	for i := range s.smallHosts {
		if rootAt[i] < 0 {
			r.rootsAt = -1
			break
		}
		r.rootsAt = max(r.rootsAt, rootAt[i]-first)
	}
	if !r.allSmall {
		phaseEnd = end
	}
	r.phase = phaseEnd - first
	for _, t := range firsts {
		if t <= phaseEnd {
			r.phasePages++
		}
	}
	for _, t := range bigFirsts {
		if t <= phaseEnd {
			r.bigInPhase++
		}
	}
	r.bigTotal = len(bigFirsts)
	r.requests -= r.afterStop
	slices.Sort(r.spans)
	return r
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// broadTable prints the runs of the broad crawl.
func broadTable(w io.Writer, p broadParams, cap time.Duration, runs []broadResult) {
	lat := "no latency"
	if p.latency > 0 {
		lat = "latency " + p.latency.String()
	}
	fmt.Fprintf(w, "\n### Broad crawl: %d hosts × %d pages + 1 host × %d pages, per_host_rate %g/s, concurrency %d, server %s, cap %s per run\n\n",
		p.smallHosts, p.smallPages+1, p.bigPages+1, p.rate, p.conc, lat, cap)
	fmt.Fprintf(w, "Ideal time until every small host is done: %s. Small host span: its root's fetch to its last page's, ideal %s. "+
		"Politeness: gaps between two requests to one host%s shorter than %s (1/rate − %s).\n\n",
		secs(p.ideal()), secs(time.Duration(float64(p.smallPages)/p.rate*float64(time.Second))), map[bool]string{true: " from one egress", false: ""}[p.perEgress],
		p.interval()-p.tolerance, p.tolerance)
	fmt.Fprintln(w, "| crawler | seeds | broad phase | pages/s in it | bound | % of bound | every small root by | small hosts done | × ideal | host span p50 / p90 / max | big host pages in phase / at end | pages at end | requests (duplicates) | politeness violations (least gap) | CPU s | stopped | requests while exiting (exit took) |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
	for _, r := range runs {
		rate, bound, of, times := "–", "–", "–", "–"
		if r.phase > 0 {
			rate = num(float64(r.phasePages) / r.phase.Seconds())
			b := p.bound(r.phase)
			bound = num(b)
			of = pct(float64(r.phasePages)/r.phase.Seconds(), b)
		}
		done := fmt.Sprintf("%d of %d", r.smallDone, p.smallHosts)
		if r.allSmall {
			done = "all at " + secs(r.phase)
			times = ratio(r.phase.Seconds(), p.ideal().Seconds())
		}
		gap := "–"
		if r.minGap >= 0 {
			gap = r.minGap.Round(time.Millisecond).String()
		}
		roots := "not all"
		if r.rootsAt >= 0 {
			roots = secs(r.rootsAt)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s | %d / %d | %d | %d (%d) | %d (%s) | %.1f | %s after %s | %d (%s) |\n",
			r.crawler, r.variant, secs(r.phase), rate, bound, of, roots, done, times,
			secs(quantile(r.spans, 0.5)), secs(quantile(r.spans, 0.9)), secs(quantile(r.spans, 1)),
			r.bigInPhase, r.bigTotal, r.pages, r.requests, r.dups, r.violations, gap, r.cpu.Seconds(), r.stopped, secs(r.wall), r.afterStop, secs(r.exit))
	}
}
