// Package redact is the one redactor of the program: it hides secrets in
// everything shown to people or stored where people read it (errors, logs,
// `check`, `failed`, the failure reasons kept by the tracker).
//
// One policy, everywhere:
//   - the user information of a URL (everything between "://" and the "@"
//     before the host) becomes Mark, whole, even when the URL does not parse:
//     a password with '/', '?', '#' or '@' would otherwise be cut in two and
//     half of it printed;
//   - the value of a query parameter whose name looks secret (Sensitive:
//     api_key, token, signature...) becomes Mark;
//   - a value the config took from the environment (${VAR}) is a secret: a
//     Redactor built with it replaces it, and its URL-escaped forms, by Mark
//     wherever it appears.
//
// No exported signature outside internal/ mentions this package: public
// packages take a func(string) string where they need it.
package redact

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
)

// Mark replaces every secret.
const Mark = "xxxxx"

// MinSecretLen is the shortest ${VAR} value treated as a secret: a shorter
// one would blank out unrelated text everywhere ("16", "on"), and is no
// secret anyway.
const MinSecretLen = 4

// sensitiveWords mark header names and query parameters whose values are
// secrets.
var sensitiveWords = []string{"auth", "cookie", "token", "secret", "password", "passwd", "key", "signature", "session", "credential"}

// Sensitive reports whether a header or query parameter named name carries
// a secret value.
func Sensitive(name string) bool {
	n := strings.ToLower(name)
	for _, w := range sensitiveWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Redactor hides URL credentials, secret query values and the secrets it
// was built with. The nil *Redactor knows no secrets and applies the rest of
// the policy. It is safe for concurrent use.
type Redactor struct {
	secrets []string // with their escaped forms, longest first
}

// New returns a Redactor that hides secrets (values shorter than
// MinSecretLen are ignored).
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if len(s) < MinSecretLen {
			continue
		}
		for _, form := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
			if !slices.Contains(r.secrets, form) {
				r.secrets = append(r.secrets, form)
			}
		}
	}
	// Longest first, so a secret that contains another is hidden whole.
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	return r
}

// URL returns raw, a string meant as one URL (a config value), safe to
// show: its user information cut up to the last '@' of the string, parsed
// or not (when the host is unknowable, too much is hidden rather than too
// little), secret query values and known secrets hidden.
func (r *Redactor) URL(raw string) string {
	if i := strings.Index(raw, "://"); i >= 0 {
		if j := strings.LastIndexByte(raw, '@'); j > i+3 {
			raw = raw[:i+3] + Mark + raw[j:]
		}
	}
	return r.String(raw)
}

// String returns s, free text (an error, a log message, a failure reason),
// with every URL in it redacted and known secrets hidden. In free text the
// user information of a URL is what precedes an '@' in its authority (up to
// the first '/', '?' or '#'), as in a parsed URL.
func (r *Redactor) String(s string) string {
	if r != nil {
		for _, sec := range r.secrets {
			s = strings.ReplaceAll(s, sec, Mark)
		}
	}
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + 3 + strings.IndexFunc(s[i+3:], endOfURL)
		if end < i+3 {
			end = len(s)
		}
		// Punctuation that ends a sentence or a message part ("url: cause")
		// is text, not URL.
		end = i + 3 + len(strings.TrimRight(s[i+3:end], ":,;.)]}!"))
		b.WriteString(s[:i+3])
		b.WriteString(redactRest(s[i+3 : end]))
		s = s[end:]
	}
}

// endOfURL is a character that cannot be part of a URL in running text.
func endOfURL(c rune) bool {
	return c <= ' ' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' || c == 0x7f
}

// redactRest redacts a URL after its "://": the user information of its
// authority, and secret query values.
func redactRest(rest string) string {
	auth := rest
	if k := strings.IndexAny(rest, "/?#"); k >= 0 {
		auth = rest[:k]
	}
	if j := strings.LastIndexByte(auth, '@'); j >= 0 {
		rest = Mark + rest[j:]
	}
	q := strings.IndexByte(rest, '?')
	if q < 0 {
		return rest
	}
	query, frag := rest[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	params := strings.Split(query, "&")
	changed := false
	for i, p := range params {
		name, _, ok := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if ok && Sensitive(name) {
			params[i] = p[:strings.IndexByte(p, '=')+1] + Mark
			changed = true
		}
	}
	if !changed {
		return rest
	}
	return rest[:q+1] + strings.Join(params, "&") + frag
}

// ErrUserinfo is the cause ParseError gives when only the user information
// of a URL kept it from parsing.
var ErrUserinfo = errors.New("the user information (before @) must percent-encode / ? # @ and spaces (%2F %3F %23 %40 %20)")

// ParseError explains why parse (url.Parse, or a client's URL parser)
// rejects raw, without showing raw's user information: parsers quote their
// input, and a password with '/', '?' or '#' is cut anywhere. parse runs
// again on URL(raw): if that succeeds, the user information was the
// problem (ErrUserinfo); otherwise its error, which cannot hold the
// password, is returned redacted. nil when raw parses.
func ParseError[T any](raw string, parse func(string) (T, error)) error {
	if _, err := parse(raw); err == nil {
		return nil
	}
	red := URL(raw)
	_, err := parse(red)
	if err == nil {
		return ErrUserinfo
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // url.Error repeats the (redacted) input: say what is wrong only
	}
	return errors.New(String(err.Error()))
}

// Error returns err with a redacted message; errors.Is and errors.As still
// see the chain. nil stays nil.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := r.String(msg); red != msg {
		return &redacted{msg: red, err: err}
	}
	return err
}

type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// ReplaceAttr is a slog.HandlerOptions.ReplaceAttr that redacts the message
// and every attribute value, errors and other values included.
func (r *Redactor) ReplaceAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); s != r.String(s) {
			a.Value = slog.StringValue(r.String(s))
		}
	case slog.KindAny:
		var s string
		if err, ok := a.Value.Any().(error); ok {
			s = err.Error()
		} else {
			s = fmt.Sprint(a.Value.Any())
		}
		if red := r.String(s); red != s {
			a.Value = slog.StringValue(red)
		}
	}
	return a
}

// URL is (*Redactor)(nil).URL: the policy without known secrets.
func URL(raw string) string { return (*Redactor)(nil).URL(raw) }

// String is (*Redactor)(nil).String.
func String(s string) string { return (*Redactor)(nil).String(s) }
