package memtracker

import (
	"context"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

var _ tracker.OnceClaimer = (*Tracker)(nil)

// maxClaims bounds the claims kept: past it, a claim first forgets the
// expired ones (O(claims), rare: a crawl makes a few claims an hour).
const maxClaims = 1024

// ClaimOnce implements tracker.OnceClaimer. Claims live in this process
// only and are not journaled: the one process that uses this engine is the
// whole fleet, and a crawl resumed after a crash may claim a key again.
func (m *Tracker) ClaimOnce(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if err := tracker.ValidateOnceKey(key, ttl); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(ctx); err != nil {
		return false, err
	}
	now := m.opts.Clock.Now()
	if until, ok := m.claims[key]; ok && now.Before(until) {
		return false, nil
	}
	if m.claims == nil {
		m.claims = map[string]time.Time{}
	}
	if len(m.claims) >= maxClaims {
		for k, until := range m.claims {
			if !now.Before(until) {
				delete(m.claims, k)
			}
		}
	}
	m.claims[key] = now.Add(ttl)
	return true, nil
}
