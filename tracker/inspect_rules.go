package tracker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of the dashboard's reads (issue 16: nothing scans a queue).
const (
	// MaxFailedPage is the largest FailedQuery.Limit.
	MaxFailedPage = 1000
	// FailedScan bounds the dead letters one FailedPage call looks at when
	// it filters (Match, Label): a page may then come back short, even empty, with
	// Next set, and the caller asks again from there.
	FailedScan = 10000
	// MaxMatch is the longest FailedQuery.Match and RequeueOptions.Match, in bytes.
	MaxMatch = 1024
	// MaxRequeueKeys is the most RequeueOptions.Keys one call takes.
	MaxRequeueKeys = 10000
	// MaxHosts is the largest n Hosts takes.
	MaxHosts = HostSample
	// LookupDepth is the deepest item Lookup finds at once among the
	// delayed ones of an engine that stores them by depth and attempts
	// (Redis); a deeper one, or one with a priority or labels, is looked
	// for among at most FailedScan delayed entries, and past them reads as
	// pending_or_done.
	LookupDepth = 32
)

// ValidateFailedQuery checks FailedPage's query (ErrInvalidArgument): the
// limit (0..MaxFailedPage), and the match (MaxMatch bytes of one line of
// valid UTF-8), the label (ValidateLabel). The cursor is the engine's to check.
func ValidateFailedQuery(q FailedQuery) error {
	if q.Limit < 0 || q.Limit > MaxFailedPage {
		return fmt.Errorf("%w: failed page: limit %d: want 0 (50) to %d", ErrInvalidArgument, q.Limit, MaxFailedPage)
	}
	if q.Label != "" {
		if err := ValidateLabel(q.Label); err != nil {
			return fmt.Errorf("%w: failed page: %w", ErrInvalidArgument, err)
		}
	}
	return validateMatch("failed page", q.Match)
}

func validateMatch(op, m string) error {
	switch {
	case len(m) > MaxMatch:
		return fmt.Errorf("%w: %s: match of %d bytes, at most %d", ErrInvalidArgument, op, len(m), MaxMatch)
	case !utf8.ValidString(m) || OneLine(m) != m:
		return fmt.Errorf("%w: %s: match %q: want one line of valid UTF-8", ErrInvalidArgument, op, m)
	}
	return nil
}

// ValidateLookup checks Lookup's key: one ValidateKey accepts
// (ErrInvalidArgument, wrapping the reason).
func ValidateLookup(key string) error {
	if err := ValidateKey(key); err != nil {
		return fmt.Errorf("%w: lookup: %w", ErrInvalidArgument, err)
	}
	return nil
}

// ValidateHosts checks Hosts' n: 1..MaxHosts.
func ValidateHosts(n int) error {
	if n < 1 || n > MaxHosts {
		return fmt.Errorf("%w: hosts: n %d: want 1 to %d", ErrInvalidArgument, n, MaxHosts)
	}
	return nil
}

// FailedLimit is q.Limit with its default.
func FailedLimit(q FailedQuery) int {
	if q.Limit == 0 {
		return 50
	}
	return q.Limit
}

// Matcher is the rule of FailedQuery's Match and Label, prepared once: the
// dead letters whose key or reason contains the text, case-insensitively,
// and that carry the label. Both engines filter with it, so they agree on
// every character.
type Matcher struct{ lower, label string }

// NewMatcher prepares match and label ("" keeps everything).
func NewMatcher(match, label string) Matcher {
	return Matcher{lower: strings.ToLower(match), label: label}
}

// Keep says whether f passes.
func (m Matcher) Keep(f FailedItem) bool {
	if m.label != "" && !slices.Contains(f.Labels, m.label) {
		return false
	}
	if m.lower == "" {
		return true
	}
	return strings.Contains(strings.ToLower(f.Key), m.lower) || strings.Contains(strings.ToLower(f.Reason), m.lower)
}

// Filters says whether the matcher keeps less than everything.
func (m Matcher) Filters() bool { return m.lower != "" || m.label != "" }

// HostCounts gathers the samples of Hosts per host; engines fill it and
// Top ranks it.
type HostCounts map[string]*HostStats

// Count adds to key's host (IDs have none).
func (h HostCounts) Count(key string, count func(*HostStats)) { h.CountHost(HostOf(key), count) }

// CountHost adds to host ("": none).
func (h HostCounts) CountHost(host string, count func(*HostStats)) {
	if host == "" {
		return
	}
	s := h[host]
	if s == nil {
		s = &HostStats{Host: host}
		h[host] = s
	}
	count(s)
}

// Top returns the n busiest hosts: most pending, then in flight, then
// errors, then by name.
func (h HostCounts) Top(n int) []HostStats {
	out := make([]HostStats, 0, len(h))
	for _, s := range h {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b HostStats) int {
		if c := cmp.Compare(b.Pending, a.Pending); c != 0 {
			return c
		}
		if c := cmp.Compare(b.InFlight, a.InFlight); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Errors, a.Errors); c != 0 {
			return c
		}
		return strings.Compare(a.Host, b.Host)
	})
	return out[:min(n, len(out))]
}

// HostDelays tells the politeness delay in force between two requests to a
// host (zero when none or unknown). The fetch client implements it; a
// one-process crawl hands it to its memory tracker for Hosts.
type HostDelays interface {
	HostDelay(host string) time.Duration
}
