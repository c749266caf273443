package notify

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Sender delivers an event to one receiver.
type Sender interface {
	// Name names the receiver in logs without a secret ("webhook
	// hooks.slack.com", "email smtp.example.org:587").
	Name() string
	// Send delivers ev once, within ctx. An error wrapping ErrPermanent is
	// not retried (a refused address, a 4xx answer).
	Send(ctx context.Context, ev Event) error
}

// Claimer is what a Notifier needs of the tracker to send once per fleet:
// tracker.SharedStore's Claim, where among callers racing for one name
// exactly one wins until the ttl passes.
type Claimer interface {
	Claim(ctx context.Context, name string, value []byte, ttl time.Duration) (bool, error)
}

// ErrPermanent marks a failure that retrying cannot fix.
var ErrPermanent = errors.New("notify: permanent failure")

// Defaults of Config.
const (
	DefaultQueue    = 64
	DefaultTimeout  = 10 * time.Second
	DefaultAttempts = 3
	DefaultBackoff  = time.Second
)

// Config is a Notifier's. The zero value of a field means its default.
type Config struct {
	Senders []Sender
	// Claimer, when set, makes a fleet send each event with a Key once:
	// only the worker whose claim wins sends it. nil: every event is sent.
	// A claim that fails (the tracker is unreachable) sends the event
	// anyway: twice is better than never.
	Claimer Claimer
	On      []Kind        // the kinds sent; empty: all
	Queue   int           // events waiting, per queue; default DefaultQueue
	Timeout time.Duration // one attempt of one sender, and one claim; default DefaultTimeout
	// Attempts per event and sender; default DefaultAttempts.
	Attempts int
	Backoff  time.Duration // before the second attempt, doubled after; default DefaultBackoff
	Logger   *slog.Logger  // default slog.Default()
	Redact   func(string) string
}

// Counters say what became of the events.
type Counters struct {
	Sent    int64 // deliveries that succeeded (one per event and receiver)
	Failed  int64 // deliveries given up after their attempts, or at Close
	Dropped int64 // events dropped from a full queue, the oldest first
	Claimed int64 // events another worker of the fleet claimed (not sent here)
}

// Notifier sends events to its senders in the background. Notify never
// blocks; Close waits, bounded, for what is queued.
type Notifier struct {
	cfg  Config
	log  *slog.Logger
	on   map[Kind]bool
	main *queue
	outs []*queue

	ctx    context.Context // cancelled when Close gives up waiting
	cancel context.CancelFunc
	wg     sync.WaitGroup

	sent, failed, dropped, claimed atomic.Int64
}

// New starts a Notifier.
func New(cfg Config) *Notifier {
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultQueue
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = DefaultAttempts
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Redact == nil {
		cfg.Redact = func(s string) string { return s }
	}
	n := &Notifier{cfg: cfg, log: cfg.Logger.With("component", "notify"), on: map[Kind]bool{}}
	for _, k := range cfg.On {
		n.on[k] = true
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.main = n.newQueue("events")
	for _, s := range cfg.Senders {
		q := n.newQueue(s.Name())
		n.outs = append(n.outs, q)
		n.wg.Add(1)
		go n.deliver(s, q)
	}
	n.wg.Add(1)
	go n.dispatch()
	return n
}

// Enabled says whether events of kind k are sent.
func (n *Notifier) Enabled(k Kind) bool { return len(n.on) == 0 || n.on[k] }

// Notify queues ev and returns at once; an event of a kind not enabled,
// or raised after Close, is dropped.
func (n *Notifier) Notify(ev Event) {
	if !n.Enabled(ev.Kind) {
		return
	}
	ev.Text = n.cfg.Redact(ev.Message())
	ev.Error = n.cfg.Redact(ev.Error)
	if !n.main.push(ev) {
		n.log.Warn("notify: event raised after the notifier closed; not sent", "kind", ev.Kind)
	}
}

// Counters returns the counts so far.
func (n *Notifier) Counters() Counters {
	return Counters{Sent: n.sent.Load(), Failed: n.failed.Load(), Dropped: n.dropped.Load(), Claimed: n.claimed.Load()}
}

// Close stops taking events and waits until what is queued is delivered
// or ctx ends; then the sends still running are cancelled and what is
// left is counted as failed. It returns the final counters.
func (n *Notifier) Close(ctx context.Context) Counters {
	n.main.close()
	done := make(chan struct{})
	go func() { n.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		n.cancel()
		<-done
	}
	n.cancel()
	c := n.Counters()
	if c.Failed > 0 || c.Dropped > 0 {
		n.log.Warn("notify: not every report was delivered", "sent", c.Sent, "failed", c.Failed, "dropped", c.Dropped)
	}
	return c
}

// dispatch claims each event for the fleet and hands it to every sender.
func (n *Notifier) dispatch() {
	defer n.wg.Done()
	defer func() {
		// Close gave up: what was not dispatched is lost for every receiver.
		n.failed.Add(int64(n.main.drain() * len(n.outs)))
		for _, q := range n.outs {
			q.close()
		}
	}()
	for {
		ev, ok := n.main.pop(n.ctx)
		if !ok {
			return
		}
		if !n.claim(ev) {
			continue
		}
		for _, q := range n.outs {
			q.push(ev)
		}
	}
}

// claim says whether this worker sends ev.
func (n *Notifier) claim(ev Event) bool {
	if ev.Key == "" || n.cfg.Claimer == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.Timeout)
	defer cancel()
	won, err := n.cfg.Claimer.Claim(ctx, "notify:"+ev.Key, []byte(ev.Worker), ev.Once)
	switch {
	case err != nil:
		n.log.Warn("notify: cannot claim the report for the fleet; sending it from here", "kind", ev.Kind,
			"err", n.cfg.Redact(err.Error()))
		return true
	case !won:
		n.claimed.Add(1)
		n.log.Debug("notify: another worker sends this report", "kind", ev.Kind)
		return false
	}
	return true
}

// deliver sends each event of q through s, with attempts and backoff.
func (n *Notifier) deliver(s Sender, q *queue) {
	defer n.wg.Done()
	for {
		ev, ok := q.pop(n.ctx)
		if !ok {
			n.failed.Add(int64(q.drain())) // Close gave up on these
			return
		}
		n.send(s, ev)
	}
}

func (n *Notifier) send(s Sender, ev Event) {
	wait := n.cfg.Backoff
	var err error
	for attempt := 1; attempt <= n.cfg.Attempts; attempt++ {
		ctx, cancel := context.WithTimeout(n.ctx, n.cfg.Timeout)
		err = s.Send(ctx, ev)
		cancel()
		if err == nil {
			n.sent.Add(1)
			n.log.Info("notify: sent", "kind", ev.Kind, "to", s.Name())
			return
		}
		if errors.Is(err, ErrPermanent) || attempt == n.cfg.Attempts || n.ctx.Err() != nil {
			break
		}
		n.log.Warn("notify: send failed; retrying", "kind", ev.Kind, "to", s.Name(), "attempt", attempt,
			"in", wait, "err", n.cfg.Redact(err.Error()))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-n.ctx.Done():
			t.Stop()
		}
		wait *= 2
	}
	n.failed.Add(1)
	n.log.Error("notify: report not delivered", "kind", ev.Kind, "to", s.Name(), "err", n.cfg.Redact(err.Error()))
}

// queue is a bounded FIFO of events that drops its oldest when full.
type queue struct {
	n      *Notifier
	name   string
	mu     sync.Mutex
	items  []Event
	closed bool
	wake   chan struct{} // one pending wake-up
}

func (n *Notifier) newQueue(name string) *queue {
	return &queue{n: n, name: name, wake: make(chan struct{}, 1)}
}

// push adds ev, dropping the oldest event when full; false once closed.
func (q *queue) push(ev Event) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	var dropped *Event
	if len(q.items) >= q.n.cfg.Queue {
		oldest := q.items[0]
		dropped = &oldest
		q.items = slices.Delete(q.items, 0, 1)
	}
	q.items = append(q.items, ev)
	q.mu.Unlock()
	if dropped != nil {
		// Logged at the 1st, 2nd, 4th, 8th... drop: a flood of events must
		// not become a flood of log lines.
		if d := q.n.dropped.Add(1); d&(d-1) == 0 {
			q.n.log.Warn("notify: queue full; dropped the oldest report", "queue", q.name, "kind", dropped.Kind,
				"dropped_so_far", d)
		}
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// pop waits for an event; false once the queue is closed and empty, or
// ctx is done.
func (q *queue) pop(ctx context.Context) (Event, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			ev := q.items[0]
			q.items = slices.Delete(q.items, 0, 1)
			q.mu.Unlock()
			return ev, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return Event{}, false
		}
		select {
		case <-q.wake:
		case <-ctx.Done():
			return Event{}, false
		}
	}
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// drain empties the queue and says how many events it held.
func (q *queue) drain() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.items)
	q.items = nil
	return n
}
