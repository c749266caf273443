package recordcodec

import (
	"sync"

	"github.com/distscrape/distscrape/record"
)

// Queue holds the Sets put and not yet written by a sink that writes in
// batches (SQL): Put appends, a Flush takes them all and gives them back
// when its write fails, in front of those put since, so that a later Flush
// writes them in their order. Safe for concurrent use.
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

// Return puts sets, taken and not written, back in front.
func (q *Queue) Return(sets []record.Set) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sets = append(sets, q.sets...)
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
