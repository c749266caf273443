package saver

import (
	"errors"
	"fmt"
)

// Sentinel errors callers branch on.
var (
	// ErrClosed is returned by Save and Flush after Close.
	ErrClosed = errors.New("saver: closed")
	// ErrInvalidPage is returned for a page that cannot be saved (nil, empty key).
	ErrInvalidPage = errors.New("saver: invalid page")
	// ErrConfig is wrapped by constructor errors about a bad setting.
	ErrConfig = errors.New("saver: bad config")
	// ErrBucketNotFound is returned by s3saver.New when the bucket does not exist.
	ErrBucketNotFound = errors.New("saver: bucket not found")
	// ErrAccessDenied is returned when the store refuses the credentials.
	ErrAccessDenied = errors.New("saver: access denied")
	// ErrNotWritable is returned by the Check functions of the drivers that
	// write files (filesaver, tarsaver, warcsaver) for an output directory
	// the saver could not write to.
	ErrNotWritable = errors.New("not writable")
)

// CheckPage returns an error wrapping ErrInvalidPage for a page no saver
// can store (nil, with an empty key, or with captures a reader could not
// tell apart: see Capture): every Save calls it first.
func CheckPage(p *Page) error {
	if p == nil {
		return fmt.Errorf("nil page: %w", ErrInvalidPage)
	}
	if p.Key == "" {
		return fmt.Errorf("page with an empty key (url %q): %w", p.URL, ErrInvalidPage)
	}
	return checkCaptures(p)
}
