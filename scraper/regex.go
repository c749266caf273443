package scraper

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/dlclark/regexp2/syntax"

	"github.com/distscrape/distscrape/fetch"
)

// DefaultRegexTimeout is a page's regex budget (all its matching) when the
// config sets none.
const DefaultRegexTimeout = time.Second

// RegexError is a regex from the config that does not compile; its message
// names the config field: "scraper.link_regex: missing closing )".
type RegexError struct {
	Field string // e.g. "scraper.link_regex"
	Expr  string
	Err   error
}

func (e *RegexError) Error() string {
	var se *syntax.Error
	if errors.As(e.Err, &se) {
		msg := se.Code.String()
		if len(se.Args) > 0 {
			msg = fmt.Sprintf(msg, se.Args...)
		}
		return fmt.Sprintf("%s: %s in %q", e.Field, msg, e.Expr)
	}
	return fmt.Sprintf("%s: %v", e.Field, e.Err)
}

func (e *RegexError) Unwrap() error { return e.Err }

// CompileRegex compiles expr (Perl/.NET syntax, dlclark/regexp2) with a match
// timeout (0: DefaultRegexTimeout). Errors name field; the config validator
// uses it too. The scrapers run it within each page's budget instead.
func CompileRegex(field, expr string, timeout time.Duration) (re *regexp2.Regexp, err error) {
	defer func() {
		// regexp2 has panicked on odd expressions; a bad config is an error.
		if r := recover(); r != nil {
			re, err = nil, &RegexError{Field: field, Expr: expr, Err: fmt.Errorf("cannot compile: %v", r)}
		}
	}()
	re, err = regexp2.Compile(expr, regexp2.None)
	if err != nil {
		return nil, &RegexError{Field: field, Expr: expr, Err: err}
	}
	if timeout <= 0 {
		timeout = DefaultRegexTimeout
	}
	re.MatchTimeout = timeout
	return re, nil
}

// matcher runs one configured regex over page bodies. Go's linear-time RE2
// engine is used when the expression means the same there (see toRE2) and
// starts with a literal; the backtracking regexp2 engine, bounded by the
// page's regex budget, otherwise.
type matcher struct {
	field string
	re2   *regexp.Regexp  // fast path; nil when not equivalent
	rx    *regexp2.Regexp // always set: the reference semantics
	// runs holds copies of rx, one per goroutine at a time: each call sets
	// its copy's MatchTimeout to what is left of the page's budget, which
	// a Regexp shared by concurrent scrapes could not take.
	runs sync.Pool
}

func compileMatcher(field, expr string, timeout time.Duration) (*matcher, error) {
	rx, err := CompileRegex(field, expr, timeout)
	if err != nil {
		return nil, err
	}
	m := &matcher{field: field, rx: rx}
	if tr, ok := toRE2(expr); ok {
		// Go's engine is linear but, without a literal prefix to skip to,
		// slower than regexp2 on large pages (see BenchmarkEngines): it is
		// used only when it can skip.
		if re, err := regexp.Compile(tr); err == nil {
			if prefix, _ := re.LiteralPrefix(); prefix != "" {
				m.re2 = re
			}
		}
	}
	return m, nil
}

// ErrRegexTimeout is wrapped in the error of a page whose regex timed out.
var ErrRegexTimeout = errors.New("scraper: regex timeout")

func (m *matcher) timeoutError(b *budget) error {
	return fetch.Final("regex timeout", &timeoutError{field: m.field, budget: b.size})
}

// get returns a copy of rx for this goroutine; put gives it back.
func (m *matcher) get() *regexp2.Regexp {
	if rx, _ := m.runs.Get().(*regexp2.Regexp); rx != nil {
		return rx
	}
	// As CompileRegex; it compiled once already, so an error cannot happen.
	rx, err := regexp2.Compile(m.rx.String(), regexp2.None)
	if err != nil {
		return m.rx
	}
	return rx
}

func (m *matcher) put(rx *regexp2.Regexp) {
	if rx != m.rx {
		m.runs.Put(rx)
	}
}

// arm sets rx's timeout to what is left of b, or reports that b is spent.
func (m *matcher) arm(rx *regexp2.Regexp, b *budget) bool {
	left := b.left()
	if left <= 0 {
		return false
	}
	if rx != m.rx {
		rx.MatchTimeout = left
	}
	return true
}

// each calls fn with the value of every match in body, in order: the first
// capture group that took part in the match, else the whole match. fn
// returns false to stop. Running out of the page's budget b is a final
// "regex timeout".
func (m *matcher) each(ctx context.Context, b *budget, body []byte, fn func([]byte) bool) (err error) {
	defer m.recoverPanic(&err)
	if b.left() <= 0 {
		return m.timeoutError(b)
	}
	if m.re2 != nil {
		for _, loc := range m.re2.FindAllSubmatchIndex(body, -1) {
			s, e := loc[0], loc[1]
			for g := 2; g < len(loc); g += 2 {
				if loc[g] >= 0 {
					s, e = loc[g], loc[g+1]
					break
				}
			}
			if !fn(body[s:e]) {
				return nil
			}
		}
		return nil
	}
	rx := m.get()
	defer m.put(rx)
	rs := getRunes(body)
	defer putRunes(rs)
	var match *regexp2.Match
	if !m.arm(rx, b) {
		return m.timeoutError(b)
	}
	match, err = rx.FindRunesMatch(rs.runes)
	for n := 0; match != nil && err == nil; n++ {
		if n%256 == 255 && ctx.Err() != nil {
			return ctx.Err()
		}
		g := &match.Group
		for _, gr := range match.Groups()[1:] {
			if len(gr.Captures) > 0 {
				g = &gr
				break
			}
		}
		if !fn(body[rs.offs[g.Index]:rs.offs[g.Index+g.Length]]) {
			return nil
		}
		if !m.arm(rx, b) {
			return m.timeoutError(b)
		}
		match, err = rx.FindNextMatch(match)
	}
	if err != nil {
		// regexp2's only run-time error is its timeout (its message quotes
		// the whole input, so it is not wrapped).
		return m.timeoutError(b)
	}
	return nil
}

// recoverPanic turns a panic of the regex engine into a final error for
// the page: one bad page must not crash the worker.
func (m *matcher) recoverPanic(err *error) {
	if r := recover(); r != nil {
		*err = fetch.Final("regex error", fmt.Errorf("scraper: %s panicked: %v", m.field, r))
	}
}

// match reports whether body matches, within the page's budget b.
func (m *matcher) match(b *budget, body []byte) (ok bool, err error) {
	defer m.recoverPanic(&err)
	if b.left() <= 0 {
		return false, m.timeoutError(b)
	}
	if m.re2 != nil {
		return m.re2.Match(body), nil
	}
	rx := m.get()
	defer m.put(rx)
	if !m.arm(rx, b) {
		return false, m.timeoutError(b)
	}
	rs := getRunes(body)
	defer putRunes(rs)
	ok, err = rx.MatchRunes(rs.runes)
	if err != nil {
		return false, m.timeoutError(b)
	}
	return ok, nil
}

// runeBuf is a body decoded for regexp2, with the byte offset of each rune
// (offs[len(runes)] == len(body)) so that matches map back to the original
// bytes, invalid UTF-8 included.
type runeBuf struct {
	runes []rune
	offs  []int
}

var runePool sync.Pool

const maxPooledRunes = 1 << 20

func getRunes(b []byte) *runeBuf {
	rs, _ := runePool.Get().(*runeBuf)
	if rs == nil {
		rs = &runeBuf{}
	}
	rs.runes, rs.offs = rs.runes[:0], rs.offs[:0]
	for i := 0; i < len(b); {
		r, w := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRune(b[i:])
		}
		rs.runes = append(rs.runes, r)
		rs.offs = append(rs.offs, i)
		i += w
	}
	rs.offs = append(rs.offs, len(b))
	return rs
}

func putRunes(rs *runeBuf) {
	if cap(rs.runes) <= maxPooledRunes {
		runePool.Put(rs)
	}
}

// .NET's classes, spelled for RE2 (regexp2 follows .NET: \d, \w and \s are
// Unicode-aware, where RE2's are ASCII-only).
const (
	netDigit = `\p{Nd}`
	netWord  = `\p{L}\p{Mn}\p{Nd}\p{Pc}`
	netSpace = `\f\n\r\t\v\x{85}\p{Z}`
)

// toRE2 translates a regexp2 expression into RE2 syntax with the same
// meaning, or reports false when it cannot be sure: lookarounds,
// backreferences, named groups (numbered differently), word boundaries, $
// (which .NET also matches before a final newline), nested classes and
// any flag but i, m, s all keep the expression on regexp2.
func toRE2(expr string) (string, bool) {
	var b strings.Builder
	inClass := false
	// Case folding of Unicode classes differs ((?i)\p{Lu} matches "a" in
	// RE2, not in .NET): that combination stays on regexp2.
	caseless, classes := false, false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '\\':
			if i+1 >= len(expr) {
				return "", false
			}
			i++
			e := expr[i]
			switch e {
			case 'd':
				b.WriteString(wrap(netDigit, inClass, false))
			case 'D':
				b.WriteString(`\P{Nd}`)
			case 'w':
				b.WriteString(wrap(netWord, inClass, false))
			case 's':
				b.WriteString(wrap(netSpace, inClass, false))
			case 'W', 'S':
				if inClass {
					return "", false
				}
				if e == 'W' {
					b.WriteString(wrap(netWord, false, true))
				} else {
					b.WriteString(wrap(netSpace, false, true))
				}
			case 'b', 'B', 'Z', 'G', 'k', 'Q', 'E', 'x', 'u', 'c', 'e':
				return "", false
			case 'p', 'P':
				classes = true
				b.WriteByte('\\')
				b.WriteByte(e)
			default:
				if '0' <= e && e <= '9' {
					return "", false // backreference or octal
				}
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			continue
		case inClass:
			if c == '[' {
				return "", false // POSIX class or .NET subtraction
			}
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			b.WriteByte(c)
			// A ']' first in the class (after an optional '^') is literal in both.
			if i+1 < len(expr) && expr[i+1] == '^' {
				i++
				b.WriteByte('^')
			}
			if i+1 < len(expr) && expr[i+1] == ']' {
				i++
				b.WriteString(`\]`)
			}
			continue
		case c == '$':
			return "", false
		case c == '(' && i+1 < len(expr) && expr[i+1] == '?':
			j := i + 2
			for j < len(expr) && strings.IndexByte("ims-", expr[j]) >= 0 {
				caseless = caseless || expr[j] == 'i'
				j++
			}
			if j >= len(expr) || (expr[j] != ':' && expr[j] != ')') {
				return "", false
			}
		}
		b.WriteByte(c)
	}
	if inClass || (caseless && classes) {
		return "", false
	}
	return b.String(), true
}

// wrap puts class items in brackets outside a class ([^...] when negated).
func wrap(items string, inClass, negate bool) string {
	if inClass {
		return items
	}
	if negate {
		return "[^" + items + "]"
	}
	if items == netDigit {
		return items
	}
	return "[" + items + "]"
}
