package tracker

import (
	"context"
	"strings"
	"time"
)

// Hosts are scheduled, not items (docs/architecture.md, "Scheduling"):
// every engine keeps the pending items of a URL key in its host's queue
// and hands out items only from hosts that are ready now, one host's slot
// booked per item, spread over the ready hosts. Items with no host (IDs,
// other keys) wait in one queue that is always ready: their fetch host is
// the scraper's to choose, and the fetcher paces it.

// HostOf is the politeness key of an item: the host, with its port, of a URL
// key, lower-cased (as fetch keys its per-host limits: url.URL.Host of a
// normalised URL); "" for a key that is no URL (an ID). Every engine
// derives an item's host with this one rule (the Redis engine's Lua
// host_of is its twin, held to it by a test).
func HostOf(key string) string {
	i := strings.Index(key, "://")
	if i <= 0 {
		return ""
	}
	h := key[i+3:]
	if j := strings.IndexAny(h, "/?#"); j >= 0 {
		h = h[:j]
	}
	if j := strings.LastIndexByte(h, '@'); j >= 0 {
		h = h[j+1:]
	}
	return asciiLower(h)
}

// asciiLower lower-cases A-Z only, as Lua's string.lower does: a host is
// ASCII once normalised (IDNs are punycode), and the engines must agree on
// any other key too.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// NextSlot is when a host may be handed out again after a lease granted at
// now: one interval after its previous slot, prev, so a host handed out a
// little late (the checkout came after its slot) keeps its rate; or one
// interval after now when prev is more than an interval ago (the host was
// idle) or unset. Every engine books a host with this rule.
func NextSlot(prev, now time.Time, interval time.Duration) time.Time {
	if prev.IsZero() || prev.Before(now.Add(-interval)) {
		prev = now
	}
	return prev.Add(interval)
}

// HostLeaseInterval is the least time between two leases of one host's
// items the tracker keeps: the interval between two requests from one egress
// (Options.HostInterval, or a host's own: Deferral.Interval) divided by the
// egresses that share the host (Options.HostEgress; every live worker with
// HostPerWorker).
func (o Options) HostLeaseInterval(interval time.Duration, workersAlive int64) time.Duration {
	n := int64(max(o.HostEgress, 1))
	if o.HostPerWorker {
		n = max(workersAlive, 1)
	}
	return interval / time.Duration(n)
}

// Deferral is a lease handed back unstarted because its host is not ready:
// the fetcher found the host's slot taken further ahead than it waits (a
// robots.txt Crawl-delay, another worker's request, a proxy's slot).
type Deferral struct {
	Lease Lease
	// Until is when the host is ready: none of its items is handed out
	// before then.
	Until time.Time
	// Interval, when positive, is the host's own interval between two
	// requests from one egress from now on (a robots.txt Crawl-delay
	// longer than the crawl's rate), used instead of Options.HostInterval
	// when longer.
	Interval time.Duration
}

// Deferrer is the capability of an engine that schedules hosts (every
// built-in engine): Defer hands leases back like Release (at the head of
// their host's queue, the attempt given back) and holds each host until
// its Until. A manager whose tracker lacks it releases such leases.
type Deferrer interface {
	Defer(ctx context.Context, ds []Deferral) error
}

// ReadyHint is the capability of an engine that schedules hosts (every
// built-in engine): NextReady is when the first host that waited for its
// slot at the engine's last Checkout is ready (zero: none waited), a hint
// for a worker that checked out nothing to sleep until then rather than
// for a poll interval. It makes no call.
type ReadyHint interface {
	NextReady() time.Time
}
