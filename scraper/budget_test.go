package scraper

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/tracker"
)

// TestRegexBudgetPerPage: every regex a page runs draws on one budget.
// Each row is a page of many matches that each stay well under the budget
// (a few ms to tens of ms of backtracking) but together take seconds: the
// page must fail with a final "regex timeout" within a small multiple of
// the budget, and the warning must name the regex that ran out.
func TestRegexBudgetPerPage(t *testing.T) {
	const budget = 200 * time.Millisecond
	const n = 200 // matches per page
	slowRun := strings.Repeat("a", 16)
	seeds := []string{"http://h.test/"}
	tests := []struct {
		name  string
		field string
		new   func(log *slog.Logger) (Scraper, error)
		body  string
	}{
		{
			name: "exclude_regex per link", field: "scraper.scope.exclude_regex",
			new: func(log *slog.Logger) (Scraper, error) {
				return NewLink(LinkConfig{ExcludeRegex: `(a+)+(?=b)`, RegexTimeout: budget, Seeds: seeds, Logger: log})
			},
			body: links(slowRun, n),
		},
		{
			name: "link_regex per match", field: "scraper.link_regex",
			new: func(log *slog.Logger) (Scraper, error) {
				return NewLink(LinkConfig{LinkRegex: `(a+)+b|href="([^"]+)"`, RegexTimeout: budget, Seeds: seeds, Logger: log})
			},
			body: strings.Repeat(slowRun[:14]+` href="/x" `, n),
		},
		{
			name: "id_regex per match", field: "scraper.id_regex",
			new: func(log *slog.Logger) (Scraper, error) {
				return NewID(IDConfig{IDRegex: `(a+)+b|(\d+)`, DownloadURLFmt: "http://h.test/{id}", RegexTimeout: budget, Logger: log})
			},
			body: func() string {
				var b strings.Builder
				for i := range n {
					fmt.Fprintf(&b, "%s %d ", slowRun[:14], i)
				}
				return b.String()
			}(),
		},
		{
			// Validation spends most of the budget; the link regex gets
			// only what is left.
			name: "validate then links share it", field: "scraper.link_regex",
			new: func(log *slog.Logger) (Scraper, error) {
				return NewLink(LinkConfig{Validate: Validate{MustNotMatch: `(a+)+b`}, LinkRegex: `(a+)+b|href="([^"]+)"`,
					RegexTimeout: budget, Seeds: seeds, Logger: log})
			},
			body: strings.Repeat("a", 15) + strings.Repeat(slowRun[:14]+` href="/x" `, n),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer // the handler serialises its writes; read after Scrape
			s, err := tt.new(slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = s.Scrape(context.Background(), tracker.Item{Key: "http://h.test/"}, page("http://h.test/", "text/html", tt.body))
			took := time.Since(start)
			var o fetch.Outcome
			if !errors.As(err, &o) || !o.Final() || o.Reason() != "regex timeout" || !errors.Is(err, ErrRegexTimeout) {
				t.Fatalf("err %v after %v; want a final regex timeout", err, took)
			}
			if took > 10*budget {
				t.Fatalf("took %v with a page budget of %v", took, budget)
			}
			out := logs.String()
			if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "regex budget") || !strings.Contains(out, tt.field) {
				t.Errorf("no warning naming %s:\n%s", tt.field, out)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name %s", err, tt.field)
			}
		})
	}
}

// TestRegexBudgetIsPerPage: a budget spent on one page leaves the next
// page's whole.
func TestRegexBudgetIsPerPage(t *testing.T) {
	l, err := NewLink(LinkConfig{ExcludeRegex: `(a+)+(?=b)`, RegexTimeout: 200 * time.Millisecond, Seeds: []string{"http://h.test/"}})
	if err != nil {
		t.Fatal(err)
	}
	slow := page("http://h.test/", "text/html", links(strings.Repeat("a", 16), 200))
	if _, err := l.Scrape(context.Background(), tracker.Item{Key: "http://h.test/"}, slow); !errors.Is(err, ErrRegexTimeout) {
		t.Fatalf("slow page: %v, want a regex timeout", err)
	}
	items, err := l.Scrape(context.Background(), tracker.Item{Key: "http://h.test/"}, page("http://h.test/", "text/html", `<a href="/ok">x</a>`))
	if err != nil || len(items) != 1 {
		t.Fatalf("next page: %v %v, want its link", keys(items), err)
	}
}

// links is a page of n distinct links, each starting with prefix.
func links(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `<a href="/%s%d">x</a>`+"\n", prefix, i)
	}
	return b.String()
}
