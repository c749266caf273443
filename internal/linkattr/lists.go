package linkattr

import "strings"

// Each calls fn with the bounds of every URL in the value v of an
// attribute of form f (One, Srcset, Spaced or Refresh; CSS values are read
// with CSSRefs). fn returns false to stop.
func Each(f Form, v string, fn func(start, end int) bool) {
	switch f {
	case One:
		s, e := trimSpace(v, 0, len(v))
		if e > s {
			fn(s, e)
		}
	case Srcset:
		srcset(v, fn)
	case Spaced:
		for i := 0; i < len(v); {
			for i < len(v) && isHTMLSpace(v[i]) {
				i++
			}
			s := i
			for i < len(v) && !isHTMLSpace(v[i]) {
				i++
			}
			if i > s && !fn(s, i) {
				return
			}
		}
	case Refresh:
		if s, e, ok := refreshURL(v); ok {
			fn(s, e)
		}
	}
}

func trimSpace(v string, s, e int) (int, int) {
	for s < e && isHTMLSpace(v[s]) {
		s++
	}
	for e > s && isHTMLSpace(v[e-1]) {
		e--
	}
	return s, e
}

// srcset splits a srcset value as the HTML standard does: a URL is a run
// of non-space characters (trailing commas cut), then descriptors up to
// the next comma outside parentheses.
func srcset(v string, fn func(start, end int) bool) {
	for i := 0; i < len(v); {
		for i < len(v) && (isHTMLSpace(v[i]) || v[i] == ',') {
			i++
		}
		start := i
		for i < len(v) && !isHTMLSpace(v[i]) {
			i++
		}
		end := start + len(strings.TrimRight(v[start:i], ","))
		if end > start && !fn(start, end) {
			return
		}
		if end < i {
			continue // trailing commas ended the candidate
		}
		for depth := 0; i < len(v) && (v[i] != ',' || depth > 0); i++ {
			switch v[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
	}
}

// refreshURL finds the URL of a meta refresh content as the HTML standard
// reads it: a delay, then ";" or ",", an optional "url=", and the URL,
// quoted or not.
func refreshURL(v string) (int, int, bool) {
	i := 0
	for i < len(v) && isHTMLSpace(v[i]) {
		i++
	}
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	for i < len(v) && isHTMLSpace(v[i]) {
		i++
	}
	if i < len(v) && (v[i] == ';' || v[i] == ',') {
		i++
	}
	for i < len(v) && isHTMLSpace(v[i]) {
		i++
	}
	if len(v)-i >= 3 && strings.EqualFold(v[i:i+3], "url") {
		j := i + 3
		for j < len(v) && isHTMLSpace(v[j]) {
			j++
		}
		if j < len(v) && v[j] == '=' {
			i = j + 1
			for i < len(v) && isHTMLSpace(v[i]) {
				i++
			}
		}
	}
	e := len(v)
	if i < len(v) && (v[i] == '"' || v[i] == '\'') {
		q := v[i]
		i++
		if k := strings.IndexByte(v[i:], q); k >= 0 {
			e = i + k
		}
	}
	s, e := trimSpace(v, i, e)
	return s, e, e > s
}
