package memtracker

import (
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/distscrape/distscrape/tracker"
)

// seenSet is the in-memory tracker's exact dedup of every item ever added:
// strings as 128-bit fingerprints, canonical numeric IDs in a sparse bitmap,
// and the ID ranges added, as intervals (a range is never expanded).
type seenSet struct {
	fps     fpSet
	ids     idBitmap
	covered intervals
}

func newSeenSet() seenSet {
	return seenSet{ids: idBitmap{chunks: map[uint64]*idChunk{}}}
}

// add records key and reports whether it was new.
func (s *seenSet) add(key string) bool {
	if id, ok := tracker.NumericID(key); ok {
		if s.covered.contains(id) {
			return false
		}
		return s.ids.add(id)
	}
	return s.fps.add(tracker.FingerprintOf(key))
}

// fpSet is a set of fingerprints in 2^16 sorted buckets (by the top bits of
// Hi): ~18 B per entry (16 and slack) plus a fixed 1.5 MiB, against 40-55 B
// per entry in a Go map, and it grows
// one small bucket at a time, never with a global rehash pause. An insert
// moves half a bucket: ~150 entries at 10^7 fingerprints.
type fpSet struct {
	buckets [][]tracker.Fingerprint // nil until the first add
	n       int
}

const fpBucketBits = 16

func fpLess(a, b tracker.Fingerprint) int {
	switch {
	case a.Hi < b.Hi:
		return -1
	case a.Hi > b.Hi:
		return 1
	case a.Lo < b.Lo:
		return -1
	case a.Lo > b.Lo:
		return 1
	}
	return 0
}

// add inserts fp and reports whether it was absent.
func (s *fpSet) add(fp tracker.Fingerprint) bool {
	if s.buckets == nil {
		s.buckets = make([][]tracker.Fingerprint, 1<<fpBucketBits)
	}
	b := &s.buckets[fp.Hi>>(64-fpBucketBits)]
	i, found := len(*b), false
	if i > 0 && fpLess((*b)[i-1], fp) >= 0 { // not an append (appends: loading a snapshot)
		i, found = slices.BinarySearchFunc(*b, fp, fpLess)
	}
	if found {
		return false
	}
	if n := len(*b); n == cap(*b) && n >= 32 {
		// Grow big buckets by 1/8, not append's 1.25-2x: at least 89% full.
		grown := make([]tracker.Fingerprint, n, n+n/8)
		copy(grown, *b)
		*b = grown
	}
	*b = slices.Insert(*b, i, fp)
	s.n++
	return true
}

// each calls fn on every fingerprint, in order.
func (s *fpSet) each(fn func(tracker.Fingerprint)) {
	for _, b := range s.buckets {
		for _, fp := range b {
			fn(fp)
		}
	}
}

// addRange records r and returns the parts of it not covered by an earlier
// range, with the number of IDs in them not already added one by one.
func (s *seenSet) addRange(r tracker.Range) (parts []tracker.Range, fresh uint64) {
	parts = s.covered.add(r)
	for _, p := range parts {
		fresh += p.Len() - s.ids.count(p)
	}
	return parts, fresh
}

// idBitmap is a sparse bitmap of uint64 IDs in chunks of 2^16 IDs, each a
// sorted array while small and a plain bitmap once dense (as in roaring
// bitmaps): ~1 bit per ID for dense spaces, ~2 B plus the chunk's share of
// overhead for sparse ones.
type idBitmap struct {
	chunks map[uint64]*idChunk // by id >> 16
	n      uint64
}

// arrayMax is where an array chunk (2 B per ID) grows larger than a bitmap
// chunk (8 KiB).
const arrayMax = 4096

type idChunk struct {
	arr  []uint16 // sorted, while the chunk holds at most arrayMax IDs
	bits *[1024]uint64
	n    int
}

func (b *idBitmap) has(id uint64) bool {
	c := b.chunks[id>>16]
	return c != nil && c.has(uint16(id))
}

func (c *idChunk) has(low uint16) bool {
	if c.bits != nil {
		return c.bits[low>>6]&(1<<(low&63)) != 0
	}
	_, found := slices.BinarySearch(c.arr, low)
	return found
}

// add sets id and reports whether it was unset.
func (b *idBitmap) add(id uint64) bool {
	c := b.chunks[id>>16]
	if c == nil {
		c = &idChunk{}
		b.chunks[id>>16] = c
	}
	low := uint16(id)
	if c.bits != nil {
		w, m := low>>6, uint64(1)<<(low&63)
		if c.bits[w]&m != 0 {
			return false
		}
		c.bits[w] |= m
	} else {
		i, found := slices.BinarySearch(c.arr, low)
		if found {
			return false
		}
		c.arr = slices.Insert(c.arr, i, low)
		if len(c.arr) > arrayMax {
			c.bits = new([1024]uint64)
			for _, v := range c.arr {
				c.bits[v>>6] |= 1 << (v & 63)
			}
			c.arr = nil
		}
	}
	c.n++
	b.n++
	return true
}

// count returns how many IDs of r are set, visiting only chunks that exist.
func (b *idBitmap) count(r tracker.Range) uint64 {
	if b.n == 0 {
		return 0
	}
	var total uint64
	loC, hiC := r.Lo>>16, r.Hi>>16
	visit := func(key uint64, c *idChunk) {
		lo, hi := uint16(0), uint16(math.MaxUint16)
		if key == loC {
			lo = uint16(r.Lo)
		}
		if key == hiC {
			hi = uint16(r.Hi)
		}
		total += c.countBetween(lo, hi)
	}
	if hiC-loC < uint64(len(b.chunks)) {
		for key := loC; ; key++ {
			if c := b.chunks[key]; c != nil {
				visit(key, c)
			}
			if key == hiC {
				break
			}
		}
		return total
	}
	for key, c := range b.chunks {
		if key >= loC && key <= hiC {
			visit(key, c)
		}
	}
	return total
}

func (c *idChunk) countBetween(lo, hi uint16) uint64 {
	if lo == 0 && hi == math.MaxUint16 {
		return uint64(c.n)
	}
	if c.bits == nil {
		i, _ := slices.BinarySearch(c.arr, lo)
		j := sort.Search(len(c.arr), func(k int) bool { return c.arr[k] > hi })
		return uint64(j - i)
	}
	var n int
	for id := uint32(lo); id <= uint32(hi); {
		w := id >> 6
		word := c.bits[w]
		if id&63 != 0 || uint32(hi)-id < 63 { // partial word
			if word&(1<<(id&63)) != 0 {
				n++
			}
			id++
			continue
		}
		n += bits.OnesCount64(word)
		id += 64
	}
	return uint64(n)
}

// intervals is a sorted list of disjoint, non-adjacent ranges: the union of
// the ranges added. Crawls add a handful of ranges, so a slice is enough.
type intervals []tracker.Range

func (iv intervals) contains(id uint64) bool {
	i := sort.Search(len(iv), func(k int) bool { return iv[k].Hi >= id })
	return i < len(iv) && iv[i].Lo <= id
}

// add merges r in and returns the parts of r that were not covered.
func (iv *intervals) add(r tracker.Range) []tracker.Range {
	var parts []tracker.Range
	cur := r.Lo
	open := true // cur..r.Hi is still to examine
	for _, x := range *iv {
		if !open || x.Lo > r.Hi {
			break
		}
		if x.Hi < cur {
			continue
		}
		if x.Lo > cur {
			parts = append(parts, tracker.Range{Lo: cur, Hi: x.Lo - 1})
		}
		if x.Hi >= r.Hi {
			open = false
		} else {
			cur = x.Hi + 1
		}
	}
	if open {
		parts = append(parts, tracker.Range{Lo: cur, Hi: r.Hi})
	}
	// Merge: drop every interval overlapping or adjacent to r, widen r.
	merged := r
	out := (*iv)[:0:0]
	for _, x := range *iv {
		adjacentBelow := x.Hi != math.MaxUint64 && x.Hi+1 == merged.Lo
		adjacentAbove := merged.Hi != math.MaxUint64 && merged.Hi+1 == x.Lo
		if x.Hi < merged.Lo && !adjacentBelow || x.Lo > merged.Hi && !adjacentAbove {
			out = append(out, x)
			continue
		}
		merged.Lo, merged.Hi = min(merged.Lo, x.Lo), max(merged.Hi, x.Hi)
	}
	i := sort.Search(len(out), func(k int) bool { return out[k].Lo > merged.Lo })
	*iv = slices.Insert(out, i, merged)
	return parts
}

func slicesBinarySearch(b []tracker.Fingerprint, fp tracker.Fingerprint) (int, bool) {
	return slices.BinarySearchFunc(b, fp, fpLess)
}
