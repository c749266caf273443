package tracker

import (
	"errors"
	"time"
)

// ErrNotFound is returned by Inspector.Lookup for a key the crawl never saw
// (on the Redis engine, also for an ID of an AddRange not carved yet that
// lies past the pending entries Lookup looks at: its IDs are marked seen
// when checkout carves them).
var ErrNotFound = errors.New("tracker: item not found")

// ItemStateName is where an item is in its life cycle, as Lookup reports it.
type ItemStateName string

// The states Lookup reports. StatePendingOrDone is the honest answer of an
// engine that keeps no per-item record of done items (the Redis engine keeps
// only a fingerprint of them): the item was added, is not leased, delayed or
// failed, and was not found among the first pending entries Lookup may look at
// (tracker.HostSample; the Redis engine also looks for a delayed item with a
// priority or labels among at most FailedScan delayed entries only).
const (
	StatePending       ItemStateName = "pending"
	StateLeased        ItemStateName = "leased"
	StateDelayed       ItemStateName = "delayed"
	StateDone          ItemStateName = "done"
	StateFailed        ItemStateName = "failed"
	StatePendingOrDone ItemStateName = "pending_or_done"
)

// ItemState is one item's state, what the dashboard's item lookup shows.
type ItemState struct {
	Key      string        `json:"key"`
	State    ItemStateName `json:"state"`
	Depth    int           `json:"depth"`
	Attempts int           `json:"attempts"`
	Worker   string        `json:"worker,omitempty"` // leased: by whom
	Deadline time.Time     `json:"deadline,omitzero"`
	Due      time.Time     `json:"due,omitzero"` // delayed (or due for a revisit)
	Reason   string        `json:"reason,omitempty"`
	At       time.Time     `json:"at,omitzero"` // failed: when
	Labels   []string      `json:"labels,omitempty"`
	Priority int           `json:"priority,omitempty"`
}

// FailedQuery selects one page of dead letters for FailedPage.
type FailedQuery struct {
	// Match, when set, keeps the dead letters whose key or reason contains it
	// (plain text, case-insensitive).
	Match string
	// Label, when set, keeps the dead letters that carry this label.
	Label string
	// Cursor is where the previous page ended ("" for the first page); it
	// stays valid while dead letters are added and requeued.
	Cursor string
	// Limit is the page size; 0 means 50.
	Limit int
}

// FailedPage is one page of dead letters, the most recent first (on the
// Redis engine with partitions: within a partition, the partitions in turn).
type FailedPage struct {
	Items []FailedItem `json:"items"`
	// Next is the cursor of the next page; "" when this was the last.
	Next string `json:"next,omitempty"`
	// Total is how many dead letters there are in all (not only matching).
	Total int64 `json:"total"`
}

// HostStats is what the tracker knows of one host, for the dashboard's hosts
// view. The counts are taken from bounded samples where noted, never from a
// scan of the queue.
type HostStats struct {
	Host     string `json:"host"`
	Pending  int64  `json:"pending"`   // among the first HostSample pending entries
	InFlight int64  `json:"in_flight"` // leased now (Redis, past HostSample leases: scaled from a random HostSample of them)
	Errors   int64  `json:"errors"`    // among the most recent HostSample dead letters
	// Delay is the fleet-wide politeness delay between two requests to the
	// host as the workers last reported it (zero when unknown).
	Delay time.Duration `json:"delay"`
}

// HostSample bounds the pending entries and dead letters Hosts looks at.
const HostSample = 1000

// RecrawlOptions selects what Recrawl puts back into pending.
type RecrawlOptions struct {
	// Match, when set, is a regexp (RE2 syntax) the keys must match.
	Match string
	// Cursor resumes a recrawl where the previous call ended ("" to start).
	Cursor string
	// Batch bounds the items moved by one call; 0 means 1000.
	Batch int
}

// RecrawlProgress is what one Recrawl call did.
type RecrawlProgress struct {
	Moved int64 `json:"moved"`
	// Next is the cursor to pass to the next call; "" when the pass is
	// fully started.
	Next string `json:"next,omitempty"`
}
