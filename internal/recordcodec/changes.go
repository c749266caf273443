package recordcodec

import (
	"context"
	"fmt"
	"sync"

	"github.com/distscrape/distscrape/record"
)

// ChangeIndex is what a file sink (JSON Lines, CSV, Parquet: append logs
// it never reads back while it writes) knows of the Sets it holds, to
// mark the records of a revisit (record.MarkChanges): a record.Held per
// current record of every (rule, key) it wrote or found in its directory
// when it opened: 251 bytes per page of one record of five fields and a
// 35-byte URL (200,000 pages measured).
// A (rule, key) it does not know (written by another worker since it
// opened) is not compared. Safe for concurrent use.
type ChangeIndex struct {
	mu sync.Mutex
	m  map[[2]string][]heldAt
}

// heldAt is a record held, at its index.
type heldAt struct {
	index int
	held  record.Held
}

func heldRecords(sc record.Schema, s record.Set) []heldAt {
	out := make([]heldAt, len(s.Records))
	for i, r := range s.Records {
		out[i] = heldAt{r.Index, record.HeldOf(sc, r)}
	}
	return out
}

// SeedChanges returns an index of the current Sets rd reads: the store as
// a sink opening on it finds it.
func SeedChanges(ctx context.Context, rd record.Reader, schemas map[string]record.Schema) (*ChangeIndex, error) {
	x := &ChangeIndex{m: map[[2]string][]heldAt{}}
	sets, err := rd.Sets(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range sets {
		if sc, ok := schemas[s.Rule]; ok {
			x.m[[2]string{s.Rule, s.Key}] = heldRecords(sc, s)
		}
	}
	return x, nil
}

// Mark returns s marked against what the index holds of (s.Rule, s.Key)
// and a commit that makes s what it holds: the sink calls it once s is
// queued, so that a Set it refused changes nothing.
func (x *ChangeIndex) Mark(sc record.Schema, s record.Set) (record.Set, func()) {
	k := [2]string{s.Rule, s.Key}
	x.mu.Lock()
	held, known := x.m[k]
	x.mu.Unlock()
	var prev map[int]record.Held
	if len(held) > 0 {
		prev = make(map[int]record.Held, len(held))
		for _, h := range held {
			prev[h.index] = h.held
		}
	}
	marked := record.MarkChanges(sc, prev, known, s)
	return marked, func() {
		h := heldRecords(sc, marked)
		x.mu.Lock()
		x.m[k] = h
		x.mu.Unlock()
	}
}

// ParseChange reads the change columns of a stored record (change,
// changes) into r: "" and "" for a record not compared.
func ParseChange(r *record.Record, change, changes string) error {
	c, ok := record.ParseChange(change)
	if !ok {
		return fmt.Errorf("change: %q is none of new, same, changed", change)
	}
	r.Change, r.Changed = c, record.ParseChanged(changes)
	return nil
}
