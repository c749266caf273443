package tracker

import (
	"errors"
	"fmt"
	"math"
	"time"
	"unicode"
	"unicode/utf8"
)

// The one validation of what a tracker accepts. Every engine calls these
// before it changes anything, and so do the callers that build items from
// outside input (seed files, the config's seeds, discovered links and IDs),
// so an item is refused by the same rule wherever it comes from. The
// conformance suite (trackertest) tries each limit on every engine.

// ErrInvalidArgument is returned for a call argument that is not an item:
// a Checkout batch size below 1, a lease TTL below MinLeaseTTL, a worker
// name ValidateWorker refuses.
var ErrInvalidArgument = errors.New("tracker: invalid argument")

// Limits of the contract.
const (
	// MaxKeyLen is the longest item key a tracker accepts, in bytes.
	MaxKeyLen = 8192
	// MaxDepth is the deepest item a tracker accepts: the memory engine
	// keeps depths in 32 bits.
	MaxDepth = math.MaxInt32
	// MaxRangeLen is the most IDs one AddRange takes: 2^60, so that the
	// int64 counts of Stats hold several maximal ranges without overflow.
	MaxRangeLen = 1 << 60
	// MinLeaseTTL is the shortest lease Checkout and Extend grant: the Redis
	// engine keeps deadlines in whole milliseconds.
	MinLeaseTTL = time.Millisecond
	// MaxLabels is the most labels one item carries, MaxLabelLen the
	// longest label in bytes: labels travel with every lease and land in
	// archive headers, so they stay few and short.
	MaxLabels   = 16
	MaxLabelLen = 64
)

// ItemError is an item a tracker refuses, with the reason;
// errors.Is(err, ErrInvalidItem) holds.
type ItemError struct {
	Key    string
	Reason string // what is wrong, e.g. "control character U+0007 at byte 3"
}

func (e *ItemError) Error() string {
	return fmt.Sprintf("%v %s: %s", ErrInvalidItem, quoteKey(e.Key), e.Reason)
}

// Is makes errors.Is(err, ErrInvalidItem) true.
func (e *ItemError) Is(target error) bool { return target == ErrInvalidItem }

// quoteKey quotes a key for a message, cut to keep one line readable.
func quoteKey(k string) string {
	const show = 80
	if len(k) > show {
		return fmt.Sprintf("%q…", k[:show])
	}
	return fmt.Sprintf("%q", k)
}

// ValidateKey reports whether key can be an item key: 1 to MaxKeyLen bytes
// of valid UTF-8 with no control character (C0, DEL, C1), no whitespace and
// no invisible format character (a byte-order mark U+FEFF, zero-width and
// bidi marks). A key is one visible token: a normalised URL or an ID, which
// `failed` and seed files show one per line, and which must not differ from
// another key by a character nobody can see.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return &ItemError{Key: key, Reason: "empty key"}
	case len(key) > MaxKeyLen:
		return &ItemError{Key: key, Reason: fmt.Sprintf("key of %d bytes, longer than the limit of %d", len(key), MaxKeyLen)}
	}
	for i := 0; i < len(key); {
		if c := key[i]; c > ' ' && c < 0x7f { // printable ASCII: URLs are all of it
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(key[i:])
		var what string
		switch {
		case r == utf8.RuneError && n == 1: // a real U+FFFD is 3 bytes
			what = "invalid UTF-8"
		case r == 0:
			what = "a NUL byte"
		case unicode.IsControl(r):
			what = fmt.Sprintf("control character %U", r)
		case unicode.IsSpace(r):
			what = fmt.Sprintf("whitespace %U", r)
		case r == '\ufeff':
			what = "byte-order mark U+FEFF"
		case unicode.Is(unicode.Cf, r):
			what = fmt.Sprintf("invisible format character %U", r)
		default:
			i += n
			continue
		}
		return &ItemError{Key: key, Reason: fmt.Sprintf("%s at byte %d", what, i)}
	}
	return nil
}

// ValidateItem checks its key (ValidateKey), its depth (0..MaxDepth), its
// priority (0..MaxPriority) and its labels (at most MaxLabels, each
// ValidateLabel's).
func ValidateItem(it Item) error {
	if err := ValidateKey(it.Key); err != nil {
		return err
	}
	if it.Depth < 0 || it.Depth > MaxDepth {
		return &ItemError{Key: it.Key, Reason: fmt.Sprintf("depth %d outside 0..%d", it.Depth, MaxDepth)}
	}
	if it.Priority < 0 || it.Priority > MaxPriority {
		return &ItemError{Key: it.Key, Reason: fmt.Sprintf("priority %d outside 0..%d", it.Priority, MaxPriority)}
	}
	if len(it.Labels) > MaxLabels {
		return &ItemError{Key: it.Key, Reason: fmt.Sprintf("%d labels, more than the limit of %d", len(it.Labels), MaxLabels)}
	}
	for _, l := range it.Labels {
		if err := ValidateLabel(l); err != nil {
			return &ItemError{Key: it.Key, Reason: err.Error()}
		}
	}
	return nil
}

// ErrInvalidLabel is wrapped in the error of a label ValidateLabel refuses.
var ErrInvalidLabel = errors.New("tracker: invalid label")

// ValidateLabel reports whether l can be a label: 1 to MaxLabelLen ASCII
// letters, digits, '.', '-' and '_', not starting with '.' or '-'. Labels
// go as they are into tar PAX and WARC headers (a comma-separated list), S3
// metadata (ASCII only) and command lines, so nothing there needs quoting.
func ValidateLabel(l string) error {
	switch {
	case l == "":
		return fmt.Errorf("%w: empty label", ErrInvalidLabel)
	case len(l) > MaxLabelLen:
		return fmt.Errorf("%w: label %s of %d bytes, longer than the limit of %d", ErrInvalidLabel, quoteKey(l), len(l), MaxLabelLen)
	case l[0] == '.' || l[0] == '-':
		return fmt.Errorf("%w: label %q starts with %q", ErrInvalidLabel, l, l[:1])
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return fmt.Errorf("%w: label %q: %q at byte %d (letters, digits, '.', '-' and '_' only)", ErrInvalidLabel, l, l[i:i+1], i)
		}
	}
	return nil
}

// ValidateItems checks every item of a batch; the error names the first bad
// one by its index.
func ValidateItems(items []Item) error {
	for i, it := range items {
		if err := ValidateItem(it); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	return nil
}

// ValidateCompletions checks the items discovered in every completion and
// its bytes (not negative): one bad completion refuses the whole call.
func ValidateCompletions(cs []Completion) error {
	for i, c := range cs {
		if err := ValidateItems(c.Discovered); err != nil {
			return fmt.Errorf("completion %d (%s): discovered %w", i, quoteKey(c.Lease.Key), err)
		}
		if c.Bytes < 0 {
			return fmt.Errorf("%w: completion %d (%s): %d bytes", ErrInvalidArgument, i, quoteKey(c.Lease.Key), c.Bytes)
		}
		if c.Revisit < 0 {
			return fmt.Errorf("%w: completion %d (%s): revisit in %v, want 0 (none) or more", ErrInvalidArgument, i, quoteKey(c.Lease.Key), c.Revisit)
		}
	}
	return nil
}

// ValidateRange checks r: Lo ≤ Hi and at most MaxRangeLen IDs.
func ValidateRange(r Range) error {
	switch {
	case r.Lo > r.Hi:
		return fmt.Errorf("%w: range %d-%d: low end above high end", ErrInvalidItem, r.Lo, r.Hi)
	case r.Hi-r.Lo >= MaxRangeLen:
		return fmt.Errorf("%w: range %d-%d: more than 2^60 IDs (MaxRangeLen)", ErrInvalidItem, r.Lo, r.Hi)
	}
	return nil
}

// ValidateCheckout checks the arguments of Checkout: a worker name
// (ValidateWorker), n ≥ 1 (n ≤ 0 is a caller's bug, not an empty queue)
// and ttl ≥ MinLeaseTTL.
func ValidateCheckout(worker string, n int, ttl time.Duration) error {
	if err := ValidateWorker(worker); err != nil {
		return fmt.Errorf("%w: checkout: %w", ErrInvalidArgument, err)
	}
	switch {
	case n < 1:
		return fmt.Errorf("%w: checkout: batch of %d items, want at least 1", ErrInvalidArgument, n)
	}
	return ValidateTTL(ttl)
}

// ValidateTTL checks a lease TTL (Checkout, Extend): at least MinLeaseTTL.
func ValidateTTL(ttl time.Duration) error {
	if ttl < MinLeaseTTL {
		return fmt.Errorf("%w: lease ttl %v, want at least %v", ErrInvalidArgument, ttl, MinLeaseTTL)
	}
	return nil
}
