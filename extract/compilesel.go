package extract

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/andybalholm/cascadia"
	"github.com/antchfx/xpath"
	"github.com/itchyny/gojq"
)

// compileEach compiles a rule's each; key names the YAML key at fault.
func compileEach(s Selector) (*sel, string, error) {
	var set []kind
	for k, v := range [...]string{kindCSS: s.CSS, kindXPath: s.XPath, kindJSON: s.JSON} {
		if v != "" {
			set = append(set, kind(k))
		}
	}
	if len(set) != 1 {
		names := make([]string, len(set))
		for i, k := range set {
			names[i] = keys[k]
		}
		return nil, "each", fmt.Errorf("%s given together: each takes exactly one of css, xpath or json", strings.Join(names, " and "))
	}
	c, err := compileSel(set[0], s.CSS, s.XPath, s.JSON, "", "")
	if err != nil {
		return nil, "each." + keys[set[0]], err
	}
	if c.scope {
		return nil, "each.css", errors.New(`":scope" is the element of an each, not a selector of one`)
	}
	return c, "", nil
}

// compileSel compiles the one expression of kind k.
func compileSel(k kind, css, xp, jq, re, text string) (s *sel, err error) {
	defer func() {
		// A parser that panics on an odd expression is a config error.
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("cannot compile %q: %v", css+xp+jq+re+text, r)
		}
	}()
	s = &sel{kind: k}
	switch k {
	case kindCSS:
		if strings.TrimSpace(css) == ":scope" {
			s.scope = true
			return s, nil
		}
		g, err := cascadia.ParseGroup(css)
		if err != nil {
			return nil, fmt.Errorf("invalid CSS selector %q: %v", css, err)
		}
		s.css = g
	case kindXPath:
		x, err := compileXPath(xp)
		if err != nil {
			return nil, fmt.Errorf("invalid XPath %q: %v", xp, err)
		}
		s.xpath, s.xpaths = x, &sync.Pool{}
	case kindJSON:
		q, err := gojq.Parse(jq)
		if err != nil {
			return nil, fmt.Errorf("invalid jq expression %q: %v", jq, err)
		}
		c, err := gojq.Compile(q, gojq.WithEnvironLoader(func() []string { return nil }))
		if err != nil {
			return nil, fmt.Errorf("invalid jq expression %q: %v", jq, err)
		}
		s.jq = c
	case kindRegex:
		r, err := compileRx(re)
		if err != nil {
			return nil, err
		}
		s.re = r
	case kindText:
		if text != TextMain {
			return nil, fmt.Errorf("unknown value %q (want %s: the page's readable main text)", text, TextMain)
		}
	}
	return s, nil
}

// compileXPath compiles expr whole. The XPath library stops at the end of
// the first complete expression and ignores what follows ("//li)", "//li
// foo"), so a typo would select something else in silence: the expression
// must also compile in parentheses (which the parser then closes, catching
// a stray token) and its parentheses and brackets must balance outside
// string literals (catching a stray closer the wrapping would absorb).
func compileXPath(expr string) (*xpath.Expr, error) {
	x, err := xpath.Compile(expr)
	if err != nil {
		return nil, err
	}
	if err := balanced(expr); err != nil {
		return nil, err
	}
	if _, err := xpath.Compile("(" + expr + ")"); err != nil {
		return nil, fmt.Errorf("unexpected text after the expression")
	}
	return x, nil
}

// balanced checks the ( ) and [ ] of an XPath expression outside its
// string literals.
func balanced(expr string) error {
	var stack []byte
	for i := 0; i < len(expr); i++ {
		switch c := expr[i]; c {
		case '\'', '"':
			j := strings.IndexByte(expr[i+1:], c)
			if j < 0 {
				return fmt.Errorf("unterminated string at byte %d", i)
			}
			i += j + 1
		case '(', '[':
			stack = append(stack, c)
		case ')', ']':
			open := byte('(')
			if c == ']' {
				open = '['
			}
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return fmt.Errorf("unmatched %q at byte %d", c, i)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed %q", stack[len(stack)-1])
	}
	return nil
}
