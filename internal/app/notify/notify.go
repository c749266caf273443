// Package notify reports a crawl to its operator (issue 26, "reports to the
// operator"): crawl done, limit reached, a dead-letter rate over a
// threshold, a worker dead, the tracker unreachable, and a periodic
// summary, to webhooks (JSON, or Slack's {"text": ...}) and by e-mail
// (SMTP with STARTTLS).
//
// Three parts, each small:
//   - Event is what happened, with the crawl's counts; Text says it in one
//     line for people.
//   - Notifier sends events without ever blocking its caller: a bounded
//     queue (full: the oldest event is dropped, counted and logged), then
//     per receiver a queue of its own, a timeout per attempt and a few
//     attempts with backoff. Before sending, it claims the event's Key
//     through the tracker (Claimer: tracker.SharedStore's Claim), so a
//     fleet sends each event once, not
//     once per worker.
//   - Watch polls the tracker (Stats, Workers) and raises the events only
//     the tracker shows: a dead-letter rate, a dead worker, the tracker
//     unreachable, the summary. Done and limit are raised by the command
//     that sees its run end.
//
// Secrets: a receiver is named in logs and errors by its host only (a
// webhook URL often is the secret: Slack and Discord put it in the path),
// and every text leaving the package goes through Config.Redact.
package notify

import (
	"fmt"
	"strings"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// Kind is what an event reports; the names are those of the config's
// notify.on list.
type Kind string

// The kinds of events.
const (
	KindDone        Kind = "done"         // the crawl is done
	KindLimit       Kind = "limit"        // a limit (limits.max_pages, max_bytes) stopped the crawl
	KindDeadLetters Kind = "dead_letters" // dead letters over a threshold of the items settled in a window
	KindWorkerDead  Kind = "worker_dead"  // a worker stopped heartbeating while holding work
	KindTrackerDown Kind = "tracker_down" // this worker cannot reach the tracker
	KindSummary     Kind = "summary"      // the crawl's counts, periodically
)

// Kinds lists every kind, in the order of the docs.
var Kinds = []Kind{KindDone, KindLimit, KindDeadLetters, KindWorkerDead, KindTrackerDown, KindSummary}

// Counts are the crawl's counts when the event was raised (tracker.Stats,
// fleet-wide).
type Counts struct {
	Done    int64 `json:"done"`
	Failed  int64 `json:"failed"` // dead letters
	Pending int64 `json:"pending"`
	Leased  int64 `json:"leased"`
	Delayed int64 `json:"delayed"`
	Added   int64 `json:"added"`
	Bytes   int64 `json:"bytes"`
	Workers int64 `json:"workers"`
}

// CountsOf takes the counts of a tracker snapshot.
func CountsOf(st tracker.Stats) Counts {
	return Counts{Done: st.Done, Failed: st.Failed, Pending: st.Pending, Leased: st.Leased, Delayed: st.Delayed,
		Added: st.Added, Bytes: st.Bytes, Workers: st.Workers}
}

// Event is one report. Its JSON form is what a webhook of format json
// receives (docs/config.md, "notify").
type Event struct {
	Kind   Kind      `json:"kind"`
	Crawl  string    `json:"crawl"`
	Worker string    `json:"worker"` // the worker that raised and sent it
	Time   time.Time `json:"time"`
	Text   string    `json:"text"` // set by the Notifier from the fields (Text)
	Counts *Counts   `json:"counts,omitempty"`

	Limit      string          `json:"limit,omitempty"`       // limit: which, "max_pages 100"
	DeadWorker *DeadWorker     `json:"dead_worker,omitempty"` // worker_dead
	Rate       *DeadLetterRate `json:"dead_letter_rate,omitempty"`
	DownFor    string          `json:"down_for,omitempty"`    // tracker_down: how long, "1m0s"
	Error      string          `json:"error,omitempty"`       // tracker_down: the last error, redacted
	PagesPerS  float64         `json:"pages_per_s,omitempty"` // summary: items done per second over Period
	Period     string          `json:"period,omitempty"`      // summary: "1h0m0s"

	// Key identifies the event across the fleet: of the workers that raise
	// an event of one Kind and Key within Once, one sends it. Empty: each
	// worker sends its own (tracker_down: the claim lives in the tracker
	// that cannot be reached).
	Key  string        `json:"-"`
	Once time.Duration `json:"-"`
}

// DeadWorker is the worker a worker_dead event is about.
type DeadWorker struct {
	Name     string    `json:"name"`
	LastSeen time.Time `json:"last_seen"`
	Leases   int64     `json:"leases"`  // held when reported
	Expired  int64     `json:"expired"` // taken back after they expired
}

// DeadLetterRate is what a dead_letters event measured.
type DeadLetterRate struct {
	Rate      float64 `json:"rate"`      // Failed / Settled
	Threshold float64 `json:"threshold"` // notify.dead_letter_rate.threshold
	Failed    int64   `json:"failed"`    // new dead letters in the window
	Settled   int64   `json:"settled"`   // items done or failed in the window
	Window    string  `json:"window"`    // "5m0s"
}

// How long a claim holds per kind: the workers of a fleet see the end of a
// crawl within seconds of each other (their last checkout), so ten minutes
// covers them and still lets a crawl started again report its own end.
const (
	onceDone       = 10 * time.Minute
	onceWorkerDead = 24 * time.Hour // a worker's life (its FirstSeen is in the key)
)

// DoneEvent is "the crawl is done", from the last snapshot.
func DoneEvent(crawl, worker string, st tracker.Stats, now time.Time) Event {
	c := CountsOf(st)
	return Event{Kind: KindDone, Crawl: crawl, Worker: worker, Time: now, Counts: &c, Key: "done", Once: onceDone}
}

// LimitEvent is "a limit stopped the crawl"; what is tracker.LimitError's
// What ("max_pages 100").
func LimitEvent(crawl, worker, what string, st tracker.Stats, now time.Time) Event {
	c := CountsOf(st)
	return Event{Kind: KindLimit, Crawl: crawl, Worker: worker, Time: now, Counts: &c, Limit: what,
		Key: "limit:" + keyPart(what), Once: onceDone}
}

// keyPart makes s fit in a claim's name (tracker.ValidateShared: letters,
// digits and . _ : / -).
func keyPart(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:/-", r) {
			return r
		}
		return '_'
	}, s)
}

// Subject is the event in a few words, for an e-mail's subject.
func (e Event) Subject() string {
	what := map[Kind]string{
		KindDone: "crawl done", KindLimit: "limit reached", KindDeadLetters: "dead letters over threshold",
		KindWorkerDead: "worker dead", KindTrackerDown: "tracker unreachable", KindSummary: "summary",
	}[e.Kind]
	if what == "" {
		what = string(e.Kind)
	}
	return fmt.Sprintf("[distscrape] %s: %s", e.Crawl, what)
}

// Message is the event for people: one line saying what happened, then
// the counts (the Slack text and the e-mail body).
func (e Event) Message() string {
	var b strings.Builder
	b.WriteString(e.headline())
	if c := e.Counts; c != nil {
		fmt.Fprintf(&b, "\n%d done, %d dead letters, %d pending, %d leased, %d delayed (retrying), %d workers; %s saved",
			c.Done, c.Failed, c.Pending, c.Leased, c.Delayed, c.Workers, humanBytes(c.Bytes))
	}
	fmt.Fprintf(&b, "\n(reported by worker %s at %s)", e.Worker, e.Time.UTC().Format(time.RFC3339))
	return b.String()
}

func (e Event) headline() string {
	switch e.Kind {
	case KindDone:
		return fmt.Sprintf("Crawl %s is done.", e.Crawl)
	case KindLimit:
		return fmt.Sprintf("Crawl %s stopped at its limit %s; what is pending is kept (raise the limit and start the workers to carry on).", e.Crawl, e.Limit)
	case KindDeadLetters:
		if r := e.Rate; r != nil {
			return fmt.Sprintf("Crawl %s: %.1f%% of the items settled in the last %s became dead letters (%d of %d; threshold %.1f%%).",
				e.Crawl, 100*r.Rate, r.Window, r.Failed, r.Settled, 100*r.Threshold)
		}
	case KindWorkerDead:
		if d := e.DeadWorker; d != nil {
			return fmt.Sprintf("Crawl %s: worker %s stopped heartbeating (last seen %s) holding %d leases, %d taken back after they expired.",
				e.Crawl, d.Name, d.LastSeen.UTC().Format(time.RFC3339), d.Leases, d.Expired)
		}
	case KindTrackerDown:
		return fmt.Sprintf("Crawl %s: worker %s has not reached the tracker for %s: %s", e.Crawl, e.Worker, e.DownFor, e.Error)
	case KindSummary:
		return fmt.Sprintf("Crawl %s: %.1f pages/s over the last %s.", e.Crawl, e.PagesPerS, e.Period)
	}
	return fmt.Sprintf("Crawl %s: %s.", e.Crawl, e.Kind)
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
