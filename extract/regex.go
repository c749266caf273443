package extract

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/dlclark/regexp2/syntax"
)

// rx is one regex of the rules, in the scraper's syntax and engine
// (regexp2, Perl/.NET), run within a page's budget. It is compiled here
// rather than through the scraper package, which will import this one
// for its follow selectors.
type rx struct {
	re    *regexp2.Regexp
	value int // the group named "value"; -1 when none
	// runs holds copies of re, one per goroutine at a time: each run sets
	// its copy's MatchTimeout to what is left of its page's budget, which a
	// Regexp shared by concurrent pages could not take.
	runs sync.Pool
}

// compileRx compiles expr as the scraper's CompileRegex does.
func compileRx(expr string) (r *rx, err error) {
	defer func() {
		// regexp2 has panicked on odd expressions; a bad config is an error.
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("cannot compile %q: %v", expr, p)
		}
	}()
	re, err := regexp2.Compile(expr, regexp2.None)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			msg := se.Code.String()
			if len(se.Args) > 0 {
				msg = fmt.Sprintf(msg, se.Args...)
			}
			return nil, fmt.Errorf("invalid regex: %s in %q", msg, expr)
		}
		return nil, fmt.Errorf("invalid regex %q: %v", expr, err)
	}
	r = &rx{re: re, value: -1}
	for _, name := range re.GetGroupNames() {
		if name == "value" {
			r.value = re.GroupNumberFromName(name)
		}
	}
	return r, nil
}

// get returns a copy of the regex armed with timeout; put gives it back.
func (r *rx) get(timeout time.Duration) *regexp2.Regexp {
	re, _ := r.runs.Get().(*regexp2.Regexp)
	if re == nil {
		// It compiled once already, so this cannot fail.
		var err error
		if re, err = regexp2.Compile(r.re.String(), regexp2.None); err != nil {
			re = regexp2.MustCompile(r.re.String(), regexp2.None)
		}
	}
	re.MatchTimeout = timeout
	return re
}

func (r *rx) put(re *regexp2.Regexp) { r.runs.Put(re) }

// matchString reports whether s matches, within the page's budget.
func (r *rx) matchString(pg *page, what string, s string) (ok bool, err error) {
	defer recoverTo(&err, what)
	left := pg.left()
	if left <= 0 {
		return false, pg.spent(what)
	}
	re := r.get(left)
	defer r.put(re)
	ok, err = re.MatchString(s)
	if err != nil {
		// regexp2's only run-time error is its timeout.
		return false, pg.spent(what)
	}
	return ok, nil
}

// find returns the value of the first match in text (every match with
// all, at most max), within the page's budget.
func (r *rx) find(pg *page, what string, text []rune, all bool, max int) (out []string, err error) {
	defer recoverTo(&err, what)
	left := pg.left()
	if left <= 0 {
		return nil, pg.spent(what)
	}
	re := r.get(left)
	defer r.put(re)
	m, err := re.FindRunesMatch(text)
	for m != nil && err == nil {
		if v, ok := r.valueOf(m); ok {
			out = append(out, v)
			if !all {
				return out, nil
			}
			if len(out) > max {
				return nil, tooMany(what, max)
			}
		}
		if re.MatchTimeout = pg.left(); re.MatchTimeout <= 0 {
			return nil, pg.spent(what)
		}
		m, err = re.FindNextMatch(m)
	}
	if err != nil {
		return nil, pg.spent(what)
	}
	return out, nil
}

// valueOf is a match's value: group "value", else the first group that
// took part, else the whole match.
func (r *rx) valueOf(m *regexp2.Match) (string, bool) {
	if r.value >= 0 {
		g := m.GroupByNumber(r.value)
		if g == nil || len(g.Captures) == 0 {
			return "", false
		}
		return g.String(), true
	}
	groups := m.Groups()
	for i := 1; i < len(groups); i++ {
		if len(groups[i].Captures) > 0 {
			return groups[i].String(), true
		}
	}
	return m.String(), true
}

// recoverTo turns a panic of an engine into an error of the page: one odd
// page must not crash the worker.
func recoverTo(err *error, what string) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("extract: %s panicked: %v", what, p)
	}
}
