package saver

import (
	"errors"
	"fmt"
	"strings"
)

// Name templates are the one way every saver names what it stores: file
// paths, tar archive paths, Redis keys, S3 object keys. Their syntax is
// part of the contract, so the config validates a template once, at the
// edge, with the parser the savers use; how a rendered name is made safe
// for its store is each driver's.

// ErrBadTemplate is wrapped by every name-template error (a *TemplateError).
var ErrBadTemplate = errors.New("saver: bad name template")

// Placeholders are the names a template may use, in braces.
var Placeholders = []string{"id", "host", "path", "sha256", "worker", "crawl"}

// TemplateError names the config field and what is wrong with its template.
type TemplateError struct {
	Field    string // e.g. "saver.key"
	Template string
	Problem  string
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("%s: %s in %q", e.Field, e.Problem, e.Template)
}

// Is makes errors.Is(err, ErrBadTemplate) true.
func (e *TemplateError) Is(target error) bool { return target == ErrBadTemplate }

// ValidateTemplate checks a name template: balanced braces ("{{" and "}}"
// are literal braces) and known placeholders only. field names the config
// key in the error.
func ValidateTemplate(field, tmpl string) error {
	_, err := ParseTemplate(field, tmpl, Placeholders)
	return err
}

// TemplatePart is one piece of a parsed name template: literal text, or a
// placeholder.
type TemplatePart struct {
	Literal     string // the text, when Placeholder is ""; "{{" already read as "{"
	Placeholder string // a placeholder's name, without braces
}

// ParseTemplate splits a name template into its parts, allowing the
// placeholders in allowed only. It refuses an empty template, unbalanced
// braces and control characters with a *TemplateError naming field.
func ParseTemplate(field, tmpl string, allowed []string) ([]TemplatePart, error) {
	bad := func(format string, a ...any) error {
		return &TemplateError{Field: field, Template: tmpl, Problem: fmt.Sprintf(format, a...)}
	}
	if tmpl == "" {
		return nil, bad("empty template")
	}
	var parts []TemplatePart
	var lit strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		switch {
		case c == '{' && i+1 < len(tmpl) && tmpl[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(tmpl) && tmpl[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(tmpl[i+1:], '}')
			if end < 0 {
				return nil, bad("unclosed { at byte %d", i)
			}
			name := tmpl[i+1 : i+1+end]
			if !contains(allowed, name) {
				return nil, bad("unknown placeholder {%s} (use %s)", name, list(allowed))
			}
			if lit.Len() > 0 {
				parts = append(parts, TemplatePart{Literal: lit.String()})
				lit.Reset()
			}
			parts = append(parts, TemplatePart{Placeholder: name})
			i += end + 1
		case c == '}':
			return nil, bad("unmatched } at byte %d (write }} for a literal brace)", i)
		case c < 0x20 || c == 0x7f:
			return nil, bad("control character %q at byte %d", c, i)
		default:
			lit.WriteByte(c)
		}
	}
	if lit.Len() > 0 {
		parts = append(parts, TemplatePart{Literal: lit.String()})
	}
	return parts, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func list(names []string) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = "{" + n + "}"
	}
	return strings.Join(s, ", ")
}
