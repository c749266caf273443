package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/internal/redact"
)

// ErrInvalid is wrapped by every error Load, Parse, Decode and Validate
// return, so the CLI can tell a bad config (exit 2) from a runtime failure:
// errors.Is(err, config.ErrInvalid).
var ErrInvalid = errors.New("invalid config")

// FieldError is one problem with one key of the config.
type FieldError struct {
	Path string // key path, e.g. "tracker.lease_ttl" or "scraper.seeds[2]"; "" for the whole file
	Msg  string // what is wrong, e.g. "missing closing )"
	Pos  string // "crawl.yaml:12" when known, else ""
}

func (e *FieldError) Error() string {
	switch {
	case e.Path == "" && e.Pos == "":
		return e.Msg
	case e.Path == "":
		return e.Pos + ": " + e.Msg
	case e.Pos == "":
		return e.Path + ": " + e.Msg
	}
	return e.Path + ": " + e.Msg + " (" + e.Pos + ")"
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// problems collects FieldErrors so all of them are reported at once.
type problems struct {
	file  string         // for positions
	lines map[string]int // key path -> line, from the YAML source
	list  []*FieldError
	seen  map[string]bool // paths already reported while decoding
	// secrets are the ${VAR} values read so far: no message may show one.
	secrets []string
}

// add records a validation problem, unless decoding already reported one
// for the same key (its value is then a zero, and a second message would
// only confuse).
func (p *problems) add(path, format string, args ...any) {
	if path != "" && p.seen[path] {
		return
	}
	e := &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}
	if line := p.lineOf(path); line > 0 {
		e.Pos = fmt.Sprintf("%s:%d", p.file, line)
	} else if path == "" && p.file != "" {
		e.Pos = p.file
	}
	p.list = append(p.list, e)
}

// lineOf is the line of path, or of the nearest key above it that is in
// the file: a required key that is missing is reported where its section
// (the list entry, the mapping) is.
func (p *problems) lineOf(path string) int {
	for path != "" {
		if line := p.lines[path]; line > 0 {
			return line
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return 0
		}
		path = path[:i]
	}
	return 0
}

// addAt records a problem at a known line (decoding, where the key path may
// not be in lines because it is unknown).
func (p *problems) addAt(path string, line int, format string, args ...any) {
	if p.seen != nil {
		p.seen[path] = true
	}
	e := &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}
	if line > 0 {
		e.Pos = fmt.Sprintf("%s:%d", p.file, line)
	}
	p.list = append(p.list, e)
}

// take adds what a driver's section (or a shared check) found, its keys
// under section.
func (p *problems) take(section string, dp *driver.Problems) {
	for _, e := range dp.List() {
		p.add(join(section, e.Key), "%s", e.Msg)
	}
}

// err returns the problems as one error (errors.Join), in the order found,
// or nil.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	red := redact.New(p.secrets...)
	errs := make([]error, len(p.list))
	for i, e := range p.list {
		e.Msg = red.String(e.Msg)
		errs[i] = e
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
