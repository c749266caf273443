package tracker

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// OneLine returns s as one line of text: every run of control characters
// (newlines, tabs, terminal escapes, NUL...) and Unicode line or paragraph
// separators becomes one space, invalid UTF-8 becomes U+FFFD, and spaces at
// the ends are trimmed. A failure's Reason is stored this way (engines apply it in
// Fail), so `distscrape failed` prints one line per dead letter whatever an
// error or a hostile page put in it.
func OneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// maxOperator bounds who an engine records as pausing a crawl.
const maxOperator = 256

// Operator returns who as engines keep it in Stats.PausedBy: one line
// (OneLine), at most 256 bytes cut at a character boundary, "unknown" when
// empty. Status prints it, so nothing a caller passes can break a terminal.
func Operator(who string) string {
	who = OneLine(who)
	if len(who) > maxOperator {
		cut := maxOperator
		for cut > 0 && !utf8.RuneStart(who[cut]) {
			cut--
		}
		who = who[:cut]
	}
	if who == "" {
		return "unknown"
	}
	return who
}
