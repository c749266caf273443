package saver

import (
	"context"
	"errors"
)

// Reading a store back: each driver has a Walk function that calls fn with
// every page its store holds, as a *Page (Key, URL, Status, ContentType,
// Header, Body, FetchedAt, Labels, Visit), and returns what it read.
// `distscrape extract --from` re-runs the extraction over them.
//
// A Walk passes the newest version of each item only: for the append-only
// stores (tar, WARC) the copy fetched last (the later copy on a tie); the
// earlier versions the file, Redis and S3 savers keep beside a page are
// left out, and so are revisits answered 304, which hold no body.

// WalkFunc receives each page of a store; an error stops the Walk, which
// returns it. The page is the callee's: the Walk never reuses it.
type WalkFunc func(p *Page) error

// Walked is what a Walk read.
type Walked struct {
	Pages   int // pages passed to fn
	Skipped int // records left out: older copies, revisits without a body
	// Warnings are what a user should know about the pages passed (bodies
	// altered by the saver, files gone); one line each.
	Warnings []string
	// Refused counts the pages the store lists that were not read because
	// reading them is unsafe (see ErrRefused); RefusedFirst names the first
	// few (20), "what: why".
	Refused      int
	RefusedFirst []string
}

// Refuse counts a page left unread for why (see Walked.Refused).
func (w *Walked) Refuse(what, why string) {
	w.Refused++
	if len(w.RefusedFirst) < 20 {
		w.RefusedFirst = append(w.RefusedFirst, what+": "+why)
	}
}

// MaxWalkBody bounds the body of one page a Walk reads back, as stored and
// once its Content-Encoding is undone: the fetcher's default max_body. A
// larger page is refused (Walked.Refuse) without being read whole, so a
// store cannot drive a Walk's memory past it, however well it compresses.
const MaxWalkBody = 64 << 20

// Errors of a Walk that callers branch on.
var (
	// ErrDamaged: the store ends in a damaged or truncated record (a
	// worker killed mid-write, a copy cut short). The Walk has passed every
	// complete record before it; the error names the file and the offset.
	ErrDamaged = errors.New("saver: store damaged")
	// ErrNotStore: the location holds no store of the driver's kind; the
	// error says what was expected there.
	ErrNotStore = errors.New("saver: not a store")
	// ErrRefused: a page the store lists was not read because reading it
	// would leave the store (a symlink, a path with ..), block (a FIFO, a
	// device) or cost more than MaxWalkBody; the Walk counts it in
	// Walked.Refused and goes on.
	ErrRefused = errors.New("saver: page refused")
)

// Source is a store to read back: a driver's Walk over one location.
type Source interface {
	Walk(ctx context.Context, fn WalkFunc) (Walked, error)
}

// SourceFunc makes a function a Source.
type SourceFunc func(ctx context.Context, fn WalkFunc) (Walked, error)

// Walk calls f.
func (f SourceFunc) Walk(ctx context.Context, fn WalkFunc) (Walked, error) { return f(ctx, fn) }
