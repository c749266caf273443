package tracker

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Revisits (issue 18): a completed item whose Completion.Revisit is positive
// is done and waits in the engine's revisit index until its due time, when
// checkout moves it back to pending (in batches, O(batch)), with the
// validators of its last visit and its visit count on the next lease. Only
// such items carry a due time, so a crawl without revisit rules costs what it
// always did.
//
// While the revisit index holds items, Done reports false: a worker of a
// crawl with revisit rules keeps waiting for them instead of exiting, and
// Stats.NextDue says when the first is due (Stats.Revisits how many wait).

// MaxETagLen bounds the ETag an engine keeps. A longer one, or one that is
// not a single line of printable text, is not kept: the next visit is then
// unconditional, which costs a body, never correctness.
const MaxETagLen = 200

// lastModifiedLayout is the one date form HTTP senders must use (RFC 9110
// IMF-fixdate), the form Kept accepts and LastModifiedTime reads.
const lastModifiedLayout = "Mon, 02 Jan 2006 15:04:05 GMT"

// Kept returns the validators an engine keeps of v: the ETag if it is at
// most MaxETagLen bytes of printable ASCII, and Last-Modified if it is an
// IMF-fixdate (kept as whole seconds, written back as one by
// ValidatorsOf). What is dropped only makes the next visit unconditional.
func (v Validators) Kept() Validators {
	out := Validators{ETag: v.ETag}
	if len(v.ETag) > MaxETagLen {
		out.ETag = ""
	}
	for i := 0; i < len(out.ETag); i++ {
		if c := out.ETag[i]; c < ' ' || c >= 0x7f {
			out.ETag = ""
			break
		}
	}
	if t, ok := v.LastModifiedTime(); ok {
		out.LastModified = t.Format(lastModifiedLayout)
	}
	return out
}

// LastModifiedTime parses LastModified (IMF-fixdate); ok is false when it is
// empty or in another form.
func (v Validators) LastModifiedTime() (t time.Time, ok bool) {
	if v.LastModified == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(lastModifiedLayout, v.LastModified)
	if err != nil || t.Unix() <= 0 {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// ValidatorsOf is the inverse of the compact form engines store: an ETag and
// a Last-Modified in Unix seconds (0: none).
func ValidatorsOf(etag string, lastModified int64) Validators {
	v := Validators{ETag: etag}
	if lastModified > 0 {
		v.LastModified = time.Unix(lastModified, 0).UTC().Format(lastModifiedLayout)
	}
	return v
}

// NextValidators are the validators a revisited item keeps after visit c:
// the response's, or, when a 304 said nothing new, those it was sent with.
func NextValidators(c Completion) Validators {
	v := c.Validators.Kept()
	if v.IsZero() && c.Unchanged {
		return c.Lease.Validators.Kept()
	}
	return v
}

// ErrRecrawlBusy is returned by Inspector.Recrawl when the ID ranges are to
// be re-run while items are pending, leased or delayed: an ID of a range
// is then done or failed or in the revisit index (nothing else), which a
// finished crawl guarantees and a running one does not. Wait for the crawl
// to finish (or recrawl with --match on keys outside the ranges).
var ErrRecrawlBusy = errors.New("tracker: recrawl of the ID ranges needs a crawl with nothing pending, leased or delayed")

// DefaultRecrawlBatch is RecrawlOptions.Batch's default.
const DefaultRecrawlBatch = 1000

// ValidateRecrawl checks opt and returns its Match compiled (nil: every
// key) and its batch with the default applied.
func ValidateRecrawl(opt RecrawlOptions) (*regexp.Regexp, int, error) {
	if opt.Batch < 0 {
		return nil, 0, fmt.Errorf("%w: recrawl: batch of %d items, want 0 (the default) or more", ErrInvalidArgument, opt.Batch)
	}
	batch := opt.Batch
	if batch == 0 {
		batch = DefaultRecrawlBatch
	}
	if opt.Match == "" {
		return nil, batch, nil
	}
	re, err := regexp.Compile(opt.Match)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: recrawl: match %q: %w", ErrInvalidArgument, opt.Match, err)
	}
	return re, batch, nil
}
