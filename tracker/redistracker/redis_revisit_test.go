package redistracker

import (
	"strings"
	"testing"

	"github.com/distscrape/distscrape/tracker"
)

// TestRevisitHeaderRoundTrip: what Go writes before a revisit's entry reads
// back as the visits and the validators Kept keeps, for the classes of
// validators a server may send; its length byte never overflows.
func TestRevisitHeaderRoundTrip(t *testing.T) {
	lm := "Wed, 21 Oct 2015 07:28:00 GMT"
	for _, tt := range []struct {
		name   string
		key    string
		visits int
		v      tracker.Validators
	}{
		{"etag and date", "https://example.org/a", 1, tracker.Validators{ETag: `"65f2a3b1-1d4c"`, LastModified: lm}},
		{"weak etag with separators", "https://example.org/b", 3, tracker.Validators{ETag: `W/"a:b;c,d"`}},
		{"date only", "17", 1, tracker.Validators{LastModified: lm}},
		{"neither", "17", 2, tracker.Validators{}},
		{"longest etag", "https://example.org/c", 1 << 40, tracker.Validators{ETag: `"` + strings.Repeat("f", tracker.MaxETagLen-2) + `"`, LastModified: lm}},
		{"etag too long", "https://example.org/d", 1, tracker.Validators{ETag: strings.Repeat("x", tracker.MaxETagLen+1)}},
		{"date in another form", "https://example.org/e", 1, tracker.Validators{LastModified: "Wednesday, 21-Oct-15 07:28:00 GMT"}},
		{"huge id", "1099511627776", 1, tracker.Validators{ETag: `"x"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := revisitHeader(tt.key, tt.visits, tt.v)
			if h == "" || int(h[1]) != len(h)-2 {
				t.Fatalf("header %q: length byte %d for %d bytes", h, h[1], len(h)-2)
			}
			visits, v, err := parseRevisitHeader(h)
			if err != nil || visits != tt.visits || v != tt.v.Kept() {
				t.Fatalf("read back %d, %+v, %v; want %d, %+v", visits, v, err, tt.visits, tt.v.Kept())
			}
			id, numeric := tracker.NumericID(tt.key)
			if isID := h[2]&1 == 1; isID != (numeric && id < hugeID) {
				t.Fatalf("ID flag %v for key %s", isID, tt.key)
			}
			if key, ok := revisitEntryKey(h + pendingEntry(tt.key, 2, 0)); !ok || key != tt.key {
				t.Fatalf("revisitEntryKey = %q, %v; want %q", key, ok, tt.key)
			}
		})
	}
	if h := revisitHeader("a", 0, tracker.Validators{}); h != "" {
		t.Fatalf("a first visit without validators has header %q, want none", h)
	}
	for _, bad := range []string{"\x07", "\x07\x05ab", "\x07\x01\x00"} {
		if _, _, err := parseRevisitHeader(bad); err == nil {
			t.Errorf("parseRevisitHeader(%q): no error", bad)
		}
	}
}
