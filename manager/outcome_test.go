package manager

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/tracker"
)

// TestFailureReasonOneLine: whatever an error holds, the reason stored with
// a failure is one line of valid UTF-8, at most maxReason bytes and an
// ellipsis, and the error's outcome survives.
func TestFailureReasonOneLine(t *testing.T) {
	long := strings.Repeat("é", maxReason) // 2 bytes each: a cut at maxReason would split none, at maxReason+1 one
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"newline", errors.New("save: disk full\nretry later"), "save: disk full retry later"},
		{"crlf and tabs", errors.New("a\r\n\tb"), "a b"},
		{"terminal escape", errors.New("\x1b[2Jcleared"), "[2Jcleared"},
		{"joined errors", errors.Join(errors.New("save: flush"), errors.New("EIO")), "save: flush EIO"},
		{"final outcome", fetch.Final("HTTP 404", errors.New("not\nfound")), ""},
		{"long multibyte", errors.New("x" + long), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := (&Manager{}).failure(tracker.Lease{}, tc.err)
			if strings.ContainsAny(f.Reason, "\n\r\t\x1b") || !utf8.ValidString(f.Reason) {
				t.Fatalf("reason %q: not one line of valid UTF-8", f.Reason)
			}
			if len(f.Reason) > maxReason+len("…") {
				t.Fatalf("reason of %d bytes", len(f.Reason))
			}
			if tc.want != "" && f.Reason != tc.want {
				t.Fatalf("reason %q, want %q", f.Reason, tc.want)
			}
			if tc.name == "final outcome" && !f.Final {
				t.Fatal("the final outcome was lost")
			}
		})
	}
}
