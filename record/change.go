package record

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"time"
)

// Change says what a record is to the record the sink held at its (Key,
// Rule, Index) before this Put: the change log of revisits. The sink sets
// it (and Record.Changed) in Put; a Set put with it set has it replaced.
type Change string

const (
	// NotCompared: the record was not compared, because it comes from a
	// first visit (Visit 0) or the sink knows no earlier Set of its (Key,
	// Rule) (see Sinks in docs/config.md).
	NotCompared Change = ""
	// New: a revisit made the record where the earlier Set of its (Key,
	// Rule) held none at its index.
	New Change = "new"
	// Same: a revisit made the record with every field as before.
	Same Change = "same"
	// Changed: a revisit made the record with Record.Changed's fields
	// different (a value changed, appeared or went).
	Changed Change = "changed"
)

// Digest is a record's fields in a form cheap to keep and to compare: one
// hash per field of its schema, in the schema's order, 0 for an absent
// field. Values compare as a sink keeps them: times in UTC to the
// microsecond (PostgreSQL's and MySQL's precision). Digests are valid
// within one process only (the hash is seeded per process).
type Digest []uint64

// digestSeed seeds the field hashes; digests never leave the process.
var digestSeed = maphash.MakeSeed()

// DigestOf returns r's Digest under sc.
func DigestOf(sc Schema, r Record) Digest {
	d := make(Digest, len(sc.Fields))
	var h maphash.Hash
	h.SetSeed(digestSeed)
	var b [8]byte
	for i, f := range sc.Fields {
		v, ok := r.Fields[f.Name]
		if !ok || v == nil {
			continue
		}
		h.Reset()
		if list, ok := v.([]any); ok {
			h.WriteByte('[')
			for _, e := range list {
				hashScalar(&h, &b, e)
			}
		} else {
			hashScalar(&h, &b, v)
		}
		d[i] = h.Sum64() | 1 // never 0: 0 is absent
	}
	return d
}

func hashScalar(h *maphash.Hash, b *[8]byte, v any) {
	put := func(tag byte, n uint64) {
		h.WriteByte(tag)
		binary.LittleEndian.PutUint64(b[:], n)
		h.Write(b[:])
	}
	switch v := v.(type) {
	case string:
		put('s', uint64(len(v)))
		h.WriteString(v)
	case int64:
		put('i', uint64(v))
	case float64:
		put('f', math.Float64bits(v))
	case bool:
		n := uint64(0)
		if v {
			n = 1
		}
		put('b', n)
	case time.Time:
		put('t', uint64(v.Truncate(time.Microsecond).UnixMicro()))
	default:
		put('?', 0)
	}
}

// Held is what a sink keeps of a current record to mark the next visit's:
// its Digest, its Visit and its own marks.
type Held struct {
	Digest  Digest
	Visit   int
	Change  Change
	Changed []string
}

// HeldOf returns r as a sink holds it under sc.
func HeldOf(sc Schema, r Record) Held {
	return Held{Digest: DigestOf(sc, r), Visit: r.Visit, Change: r.Change, Changed: r.Changed}
}

// HeldSet returns HeldOf each record of s, by index: what a sink passes
// to MarkChanges for the records it holds.
func HeldSet(sc Schema, s Set) map[int]Held {
	m := make(map[int]Held, len(s.Records))
	for _, r := range s.Records {
		m[r.Index] = HeldOf(sc, r)
	}
	return m
}

// MarkChanges sets the Change and Changed of set's records (on a copy of
// its Records) against prev, the records the sink held of (set.Key,
// set.Rule) by index (nil or empty when it held none): records of a first
// visit (Visit 0) are NotCompared, as are all when known is false (the
// sink cannot tell what it held). A record the sink holds from the same
// visit with the same values is this visit delivered again (at-least-once
// delivery, a Flush retried): it keeps that record's marks. It returns the
// Set marked. A record of prev that set lacks is removed: it leaves the
// current records (and is kept as a version with KeepVersions).
func MarkChanges(sc Schema, prev map[int]Held, known bool, set Set) Set {
	recs := make([]Record, len(set.Records))
	copy(recs, set.Records)
	set.Records = recs
	for i := range recs {
		r := &recs[i]
		r.Change, r.Changed = NotCompared, nil
		if !known || r.Visit == 0 {
			continue
		}
		old, ok := prev[r.Index]
		if !ok {
			r.Change = New
			continue
		}
		r.Change, r.Changed = Same, diffDigests(sc, old.Digest, DigestOf(sc, *r))
		if old.Visit == r.Visit && len(r.Changed) == 0 {
			r.Change, r.Changed = old.Change, old.Changed
			continue
		}
		if len(r.Changed) > 0 {
			r.Change = Changed
		}
	}
	return set
}

func diffDigests(sc Schema, old, cur Digest) []string {
	var out []string
	for i, f := range sc.Fields {
		var o uint64
		if i < len(old) {
			o = old[i]
		}
		if o != cur[i] {
			out = append(out, f.Name)
		}
	}
	slices.Sort(out)
	return out
}

// FormatChanged is Record.Changed as the sinks store it: the field names
// joined by ',' (a field name holds none); "" for none.
func FormatChanged(fields []string) string { return strings.Join(fields, ",") }

// ParseChanged is FormatChanged undone; nil for "".
func ParseChanged(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// ParseChange checks a stored change mark.
func ParseChange(s string) (Change, bool) {
	switch c := Change(s); c {
	case NotCompared, New, Same, Changed:
		return c, true
	}
	return "", false
}

// MarkRevisits marks sets, each of its own key, against the current Sets
// of their keys that read returns (MarkChanges); read is asked only for
// the keys of revisits, and not at all when there are none: a first
// visit's records are not compared. What a SQL sink does in the
// transaction that replaces the rows.
func MarkRevisits(sc Schema, sets []Set, read func(keys []string) ([]Set, error)) error {
	var keys []string
	for _, set := range sets {
		if len(set.Records) > 0 && set.Records[0].Visit > 0 {
			keys = append(keys, set.Key)
		}
	}
	held := map[string]map[int]Held{}
	if len(keys) > 0 {
		cur, err := read(keys)
		if err != nil {
			return err
		}
		for _, c := range cur {
			held[c.Key] = HeldSet(sc, c)
		}
	}
	for i, set := range sets {
		sets[i] = MarkChanges(sc, held[set.Key], true, set)
	}
	return nil
}
