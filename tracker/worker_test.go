package tracker_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/tracker"
)

func TestValidateWorker(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"scraper-07", true},
		{"host.example-1234", true},
		{"w_1", true},
		{"a..b", true}, // dots inside a name are harmless: it is never split on them
		{strings.Repeat("w", tracker.MaxWorkerLen), true},
		{"", false},
		{".", false},
		{"..", false},
		{".hidden", false},
		{"-x", false},
		{"--id", false},
		{"a/b", false},
		{`a\b`, false},
		{"../x", false},
		{"a\x00b", false},
		{"a\nb", false},
		{"a b", false},
		{"wörker", false},
		{"{crawl}", false},
		{"a:b", false},
		{"a*", false},
		{strings.Repeat("w", 200), false},
	} {
		err := tracker.ValidateWorker(c.name)
		if c.ok != (err == nil) {
			t.Errorf("ValidateWorker(%q) = %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !errors.Is(err, tracker.ErrBadWorker) {
			t.Errorf("ValidateWorker(%q) = %v, not ErrBadWorker", c.name, err)
		}
	}
}
