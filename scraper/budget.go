package scraper

import (
	"errors"
	"log/slog"
	"time"
)

// budget is the regex time of one page: every match run while scraping it
// (link_regex, exclude_regex, id_regex, validate's regexes) draws on one
// deadline, so a page with many links cannot multiply the timeout by its
// link count (an exclude pattern checked per link once held a page for
// 12 s with a 200 ms timeout).
type budget struct {
	size     time.Duration
	deadline time.Time
}

// newBudget starts a budget of d (0: DefaultRegexTimeout).
func newBudget(d time.Duration) *budget {
	if d <= 0 {
		d = DefaultRegexTimeout
	}
	return &budget{size: d, deadline: time.Now().Add(d)}
}

// left is the time still available; <= 0 when spent.
func (b *budget) left() time.Duration { return time.Until(b.deadline) }

// warnSpent logs a page whose regex budget ran out: the page fails with a
// final "regex timeout", and an operator should see which regex did it.
func warnSpent(log *slog.Logger, err error, attr, key string) {
	var te *timeoutError
	if errors.As(err, &te) {
		log.Warn("regex budget of the page ran out; the page fails", attr, key,
			"regex", te.field, "budget", te.budget)
	}
}

// timeoutError is the cause of a page's "regex timeout": which regex was
// running when the page's budget ran out.
type timeoutError struct {
	field  string
	budget time.Duration
}

func (e *timeoutError) Error() string {
	return ErrRegexTimeout.Error() + ": " + e.field + " ran out of the page's regex budget of " + e.budget.String()
}

func (e *timeoutError) Unwrap() error { return ErrRegexTimeout }
