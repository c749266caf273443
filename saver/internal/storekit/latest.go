package storekit

import (
	"crypto/sha256"
	"time"
)

// Latest picks the newest copy of each key in an append-only store read
// twice (tar, WARC): the first pass Sees every copy at its position (its
// order in the walk), the second passes a copy on only if it Wins. The
// newest is the copy fetched last; on a tie (or without fetch times) the
// later position, since a store appends what it saves.
//
// Keys are held by their SHA-256, so a store of long keys that compress
// well (a tar.gz of many 1 MiB keys) costs 32 bytes a key, not its keys.
type Latest struct {
	best map[[sha256.Size]byte]copyAt
}

type copyAt struct {
	fetched time.Time
	pos     int
}

// NewLatest returns an empty Latest.
func NewLatest() *Latest { return &Latest{best: map[[sha256.Size]byte]copyAt{}} }

// See records a copy of key fetched at fetched, at position pos (increasing).
func (l *Latest) See(key string, fetched time.Time, pos int) {
	h := sha256.Sum256([]byte(key))
	if b, ok := l.best[h]; ok && fetched.Before(b.fetched) {
		return
	}
	l.best[h] = copyAt{fetched, pos}
}

// Wins reports whether the copy of key at pos is the newest.
func (l *Latest) Wins(key string, pos int) bool {
	b, ok := l.best[sha256.Sum256([]byte(key))]
	return ok && b.pos == pos
}
