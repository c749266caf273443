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
	// ErrBucketNotFound is returned by NewS3 when the bucket does not exist.
	ErrBucketNotFound = errors.New("saver: bucket not found")
	// ErrAccessDenied is returned when the store refuses the credentials.
	ErrAccessDenied = errors.New("saver: access denied")
)

func configErr(field, format string, a ...any) error {
	return fmt.Errorf("%s: %s: %w", field, fmt.Sprintf(format, a...), ErrConfig)
}

func checkPage(p *Page) error {
	if p == nil {
		return fmt.Errorf("nil page: %w", ErrInvalidPage)
	}
	if p.Key == "" {
		return fmt.Errorf("page with an empty key (url %q): %w", p.URL, ErrInvalidPage)
	}
	return nil
}
