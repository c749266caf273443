package tracker_test

import (
	"testing"

	"github.com/distscrape/distscrape/tracker"
)

// TestOneLine: every way text can break a line, or a terminal, is one space.
func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"HTTP 404", "HTTP 404"},
		{"a\nb", "a b"},
		{"a\r\nb", "a b"},
		{"a\rb", "a b"},
		{"a\n\n\nb", "a b"},
		{"a\tb", "a b"},
		{"a\vb\fc", "a b c"},
		{"a\x00b", "a b"},
		{"\x1b[31mred\x1b[0m", "[31mred [0m"},
		{"a\u0085b", "a b"},          // NEL
		{"a\u2028b\u2029c", "a b c"}, // line and paragraph separators
		{"a\x7fb", "a b"},            // DEL
		{"\n leading and trailing \n", "leading and trailing"},
		{"bad \xff utf-8", "bad \uFFFD utf-8"},
		{"", ""},
		{"\n\r\t", ""},
		{"café ünïcode", "café ünïcode"},
	} {
		if got := tracker.OneLine(tc.in); got != tc.want {
			t.Errorf("OneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
