package extract

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/distscrape/distscrape/record"
)

// Convert turns a value found in a page (or a field's default) into type
// t, as Record.Fields holds it. base resolves URLs (nil: URLs must be
// absolute). s is trimmed of white space first, and made text every sink
// stores: a NUL byte and an invalid UTF-8 sequence become U+FFFD (as an
// HTML parser makes a NUL, as encoding/json makes invalid UTF-8).
//
//   - string: as found.
//   - int: an optional sign, digits, optionally grouped by thousands with
//     ',' '.' ' ' '\” '_' or a no-break space (groups of three after the
//     first), a currency symbol or a three-letter code before or after
//     ("$1,234", "1 234 €", "USD 12"), and a fraction of zeros only
//     ("12.00"). A lone '.' or ',' followed by exactly three digits groups
//     thousands ("1.000" is 1000). "1.5" and "1e3" are not ints.
//   - float: as int, and a decimal separator: of '.' and ',' the last one
//     when both occur ("1,234.50", "1.234,50"); a lone ',' when not followed
//     by exactly three digits ("12,50" is 12.5, "1,234" is 1234); a lone
//     '.' always ("1.234" is 1.234); and Go's own syntax ("1.5e3"). NaN and
//     infinities are not floats.
//   - bool: true, t, yes, y, on, 1 and false, f, no, n, off, 0, in any case.
//   - time: RFC 3339 (a missing zone is UTC), "2006-01-02 15:04:05",
//     "2006-01-02", HTTP dates (RFC 1123, RFC 850, ANSI C), RFC 822, dates
//     with English month names ("January 2, 2006", "2 Jan 2006"), and Unix
//     seconds ("1700000000", "1700000000.5"); stored in UTC. Years 1 to
//     9999 only (RFC 3339's, and what every sink stores): "0000-01-01" is
//     not a time.
//   - url: resolved against base; the result must be absolute, and
//     javascript:, data: and vbscript: are not URLs of a page.
func Convert(t record.Type, s string, base *url.URL) (any, error) {
	s = text(strings.TrimSpace(s))
	var v any
	var err error
	switch t {
	case record.String, "":
		return s, nil
	case record.Int:
		v, err = parseInt(s)
	case record.Float:
		v, err = parseFloat(s)
	case record.Bool:
		v, err = parseBool(s)
	case record.Time:
		v, err = parseTime(s)
	case record.URL:
		v, err = parseURL(s, base)
	default:
		return nil, fmt.Errorf("%q is not a type", t)
	}
	if err != nil {
		msg := fmt.Sprintf("%s is not %s %s", quote(s), article(t), t)
		if err != errPlain {
			msg += ": " + err.Error()
		}
		return nil, errors.New(msg)
	}
	return v, nil
}

// text returns s with each NUL byte and invalid UTF-8 sequence replaced
// by U+FFFD.
func text(s string) string {
	if utf8.ValidString(s) && !strings.Contains(s, "\x00") {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// errPlain: the value is not of the type, nothing more to say.
var errPlain = errors.New("not of the type")

func article(t record.Type) string {
	if t == record.Int {
		return "an"
	}
	return "a"
}

// quote quotes s for a message, cut to 64 bytes.
func quote(s string) string {
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

// number is a numeric text taken apart: its sign, integer digits and
// fraction digits.
type number struct {
	neg       bool
	int, frac string
}

// parseNumber takes a numeric text apart by the rules of Convert. For an
// int, a lone '.' followed by exactly three digits groups thousands too.
func parseNumber(s string, isInt bool) (number, error) {
	var n number
	s = stripCurrency(s)
	if s == "" {
		return n, errPlain
	}
	switch {
	case strings.HasPrefix(s, "-"), strings.HasPrefix(s, "+"):
		n.neg = s[0] == '-'
		s = s[1:]
	case strings.HasPrefix(s, "\u2212"): // minus sign
		n.neg = true
		s = s[len("\u2212"):]
	}
	s = stripCurrency(s) // "-$5"
	dot, comma := strings.LastIndexByte(s, '.'), strings.LastIndexByte(s, ',')
	dec := -1 // index of the decimal separator
	switch {
	case dot >= 0 && comma >= 0:
		dec = max(dot, comma)
		if strings.Count(s, s[dec:dec+1]) > 1 {
			return n, errors.New("two decimal separators")
		}
	case dot >= 0 && strings.Count(s, ".") == 1 && !(isInt && threeDigits(s[dot+1:])):
		dec = dot
	case comma >= 0 && strings.Count(s, ",") == 1 && !threeDigits(s[comma+1:]):
		dec = comma
	}
	whole := s
	if dec >= 0 {
		whole, n.frac = s[:dec], s[dec+1:]
		if n.frac == "" || strings.Trim(n.frac, "0123456789") != "" {
			return n, errPlain
		}
	}
	digits, err := ungroup(whole)
	if err != nil {
		return n, err
	}
	n.int = digits
	return n, nil
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func threeDigits(s string) bool {
	return len(s) == 3 && strings.Trim(s, "0123456789") == ""
}

// ungroup returns the digits of s, checking its thousands separators: one
// kind, groups of three after a first group of one to three digits.
func ungroup(s string) (string, error) {
	if s == "" {
		return "", errPlain
	}
	var sep rune = -1
	var b strings.Builder
	group, groups := 0, 0
	for _, r := range s {
		switch {
		case '0' <= r && r <= '9':
			b.WriteRune(r)
			group++
			continue
		case r == ',' || r == '.' || r == ' ' || r == '\'' || r == '_' || r == '\u00a0' || r == '\u202f' || r == '\u2009' || r == '\u2019':
		default:
			return "", errPlain
		}
		if sep >= 0 && r != sep {
			return "", errors.New("mixed thousands separators")
		}
		sep = r
		if group == 0 || group > 3 || (groups > 0 && group != 3) {
			return "", errors.New("thousands separators out of place")
		}
		group = 0
		groups++
	}
	if group == 0 || (groups > 0 && group != 3) {
		return "", errors.New("thousands separators out of place")
	}
	return b.String(), nil
}

// stripCurrency trims a currency symbol (Unicode Sc) or a three-letter
// upper-case code from either end of s, with the space beside it.
func stripCurrency(s string) string {
	s = strings.TrimSpace(s)
	if r, w := utf8.DecodeRuneInString(s); unicode.Is(unicode.Sc, r) {
		s = strings.TrimSpace(s[w:])
	} else if len(s) > 3 && isCode(s[:3]) && !isLetter(s[3]) {
		s = strings.TrimSpace(s[3:])
	}
	if r, w := utf8.DecodeLastRuneInString(s); unicode.Is(unicode.Sc, r) {
		s = strings.TrimSpace(s[:len(s)-w])
	} else if n := len(s); n > 3 && isCode(s[n-3:]) && !isLetter(s[n-4]) {
		s = strings.TrimSpace(s[:n-3])
	}
	return s
}

func isCode(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func parseInt(s string) (int64, error) {
	n, err := parseNumber(s, true)
	if err != nil {
		return 0, err
	}
	if strings.Trim(n.frac, "0") != "" {
		return 0, errors.New("it has a fraction")
	}
	digits := n.int
	if n.neg {
		digits = "-" + digits
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, errors.New("out of range")
	}
	return v, nil
}

func parseFloat(s string) (float64, error) {
	if s != "" && strings.Trim(s, "+-.0123456789eE") == "" {
		// Go's syntax first ("1.5e3", "-.5"), but not its "Inf", "NaN"
		// or hexadecimal.
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			return v, nil
		}
	}
	n, err := parseNumber(s, false)
	if err != nil {
		return 0, err
	}
	text := n.int
	if n.frac != "" {
		text += "." + n.frac
	}
	if n.neg {
		text = "-" + text
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, errors.New("out of range")
	}
	return v, nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "t", "yes", "y", "on", "1":
		return true, nil
	case "false", "f", "no", "n", "off", "0":
		return false, nil
	}
	return false, errors.New("want true/false, yes/no, on/off or 1/0")
}

// timeLayouts are tried in order by parseTime.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02",
	time.RFC1123,
	time.RFC1123Z,
	"Mon, 2 Jan 2006 15:04:05 MST",
	"Mon, 2 Jan 2006 15:04:05 -0700",
	time.RFC850,
	time.ANSIC,
	time.RFC822,
	time.RFC822Z,
	"January 2, 2006",
	"Jan 2, 2006",
	"2 January 2006",
	"2 Jan 2006",
}

func parseTime(s string) (time.Time, error) {
	if sec, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), "."); allDigits(sec) && (frac == "" || allDigits(frac)) {
		n, err := strconv.ParseInt(sec, 10, 64)
		if err != nil || n > 1<<40 {
			return time.Time{}, errors.New("out of range for Unix seconds")
		}
		var ns int64
		if frac != "" {
			f, _ := strconv.ParseFloat("0."+frac, 64)
			ns = int64(f * 1e9)
		}
		if strings.HasPrefix(s, "-") {
			n, ns = -n, -ns
		}
		return inYears(time.Unix(n, ns).UTC())
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return inYears(t.UTC())
		}
	}
	return time.Time{}, errors.New("want RFC 3339 (2006-01-02T15:04:05Z), a date (2006-01-02), an HTTP date or Unix seconds")
}

// inYears refuses a time outside years 1-9999, which no sink stores.
func inYears(t time.Time) (time.Time, error) {
	if y := t.Year(); y < 1 || y > 9999 {
		return time.Time{}, fmt.Errorf("year %d is outside 1-9999", y)
	}
	return t, nil
}

func parseURL(s string, base *url.URL) (string, error) {
	u, err := url.Parse(strings.ReplaceAll(s, " ", "%20"))
	if err != nil {
		return "", errPlain
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	switch strings.ToLower(u.Scheme) {
	case "":
		return "", errors.New("not absolute")
	case "javascript", "data", "vbscript":
		return "", errors.New("a " + u.Scheme + ": URL")
	}
	if (u.Scheme == "http" || u.Scheme == "https") && u.Host == "" {
		return "", errors.New("no host")
	}
	return u.String(), nil
}
