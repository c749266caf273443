package recordcodec

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/distscrape/distscrape/record"
)

// Queue holds the Sets put and not yet written by a sink that writes in
// batches (SQL): Put appends, a Flush takes them all and gives them back
// when its write fails, in front of those put since, so that a later Flush
// writes them in their order. Given back, they keep one Set per (key,
// rule), the last put: one replaced while the store was down was never
// stored and is no version, and a page fetched again during an outage does
// not grow the queue. Safe for concurrent use.
type Queue struct {
	mu     sync.Mutex
	sets   []record.Set
	closed bool
}

// Add appends s; false when the queue is closed.
func (q *Queue) Add(s record.Set) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.sets = append(q.sets, s)
	return true
}

// Take returns every Set queued and empties the queue.
func (q *Queue) Take() []record.Set {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.sets
	q.sets = nil
	return s
}

// Return puts sets, taken and not written, back in front, and keeps the
// last Set of each (key, rule) of the queue.
func (q *Queue) Return(sets []record.Set) {
	q.mu.Lock()
	defer q.mu.Unlock()
	all := append(sets, q.sets...)
	last := make(map[[2]string]int, len(all))
	for i, s := range all {
		last[[2]string{s.Key, s.Rule}] = i
	}
	kept := all[:0]
	for i, s := range all {
		if last[[2]string{s.Key, s.Rule}] == i {
			kept = append(kept, s)
		}
	}
	clear(all[len(kept):])
	q.sets = kept
}

// Discard drops the queued Sets of keys.
func (q *Queue) Discard(keys []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	drop := make(map[string]bool, len(keys))
	for _, k := range keys {
		drop[k] = true
	}
	q.sets = slices.DeleteFunc(q.sets, func(s record.Set) bool { return drop[s.Key] })
}

// Len is how many Sets are queued.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.sets)
}

// Close makes Add refuse; it reports whether the queue was open.
func (q *Queue) Close() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	was := !q.closed
	q.closed = true
	return was
}

// Closed reports whether Close was called.
func (q *Queue) Closed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// Batch is the Put, Flush and Close of a sink that writes its Sets in
// transactions (SQL): Put checks a Set whole against its rule's schema and
// queues it; Flush hands every queued Set to Write, one Flush at a time,
// and queues them again, in front, when Write fails.
type Batch struct {
	Name    string // the driver, which starts every error: "pgsink"
	Crawl   string
	Schemas map[string]record.Schema
	// Write writes sets in one transaction.
	Write func(ctx context.Context, sets []record.Set) error
	// Wrap, when set, dresses the error of a failed Write (to say the
	// server is unavailable, to hide a password).
	Wrap func(ctx context.Context, err error) error

	queue   Queue
	flushMu sync.Mutex // one Flush at a time: Flush returns once all put before it is written
}

// Put checks set whole and queues it.
func (b *Batch) Put(ctx context.Context, set record.Set) error {
	sc, ok := b.Schemas[set.Rule]
	if !ok {
		return fmt.Errorf("%s: %w: no rule %q among the sink's schemas", b.Name, record.ErrSchema, set.Rule)
	}
	if err := record.CheckSet(sc, b.Crawl, set); err != nil {
		return fmt.Errorf("%s: %w", b.Name, err)
	}
	if !b.queue.Add(set) {
		return fmt.Errorf("%s: put: %w", b.Name, record.ErrClosed)
	}
	return nil
}

// Flush writes every queued Set in one transaction; on an error they stay
// queued for the next Flush.
func (b *Batch) Flush(ctx context.Context) error {
	if b.queue.Closed() {
		return fmt.Errorf("%s: flush: %w", b.Name, record.ErrClosed)
	}
	return b.flush(ctx)
}

func (b *Batch) flush(ctx context.Context) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	sets := b.queue.Take()
	if len(sets) == 0 {
		return nil
	}
	if err := b.Write(ctx, sets); err != nil {
		b.queue.Return(sets)
		err = fmt.Errorf("%s: flush of %d sets: %w", b.Name, len(sets), err)
		if b.Wrap != nil {
			err = b.Wrap(ctx, err)
		}
		return err
	}
	return nil
}

// Discard drops the Sets of keys put and not yet written
// (record.Discarder), after the Flush under way: one that fails gives its
// Sets back, and those of keys are dropped then.
func (b *Batch) Discard(keys []string) {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	b.queue.Discard(keys)
}

// Close makes Put and Flush refuse and writes what is queued; open is
// false (and nothing is done) when the batch was closed already.
func (b *Batch) Close(ctx context.Context) (open bool, err error) {
	if !b.queue.Close() {
		return false, nil
	}
	return true, b.flush(ctx)
}
