package config

import (
	"errors"
	"fmt"

	"github.com/distscrape/distscrape/extract"
	"github.com/distscrape/distscrape/record"
)

// ExtractRules is the extract: section as the extract package takes it:
// the one conversion, shared by validation and the command line.
func (c *Config) ExtractRules() []extract.Rule {
	out := make([]extract.Rule, len(c.Extract))
	for i, r := range c.Extract {
		er := extract.Rule{Name: r.Name, Match: r.Match, OnInvalid: r.OnInvalid,
			Each: extract.Selector{CSS: r.Each.CSS, XPath: r.Each.XPath, JSON: r.Each.JSON}}
		for _, f := range r.Fields {
			ef := extract.Field{Name: f.Name, CSS: f.CSS, Attr: f.Attr, XPath: f.XPath,
				JSON: f.JSON, Regex: f.Regex, Text: f.Text, All: f.All, Type: record.Type(f.Type),
				Required: f.Required, Default: f.Default, KeepSpaces: f.KeepSpaces}
			for _, st := range f.Process {
				es := extract.Step{Split: st.Split, Join: st.Join, Squash: st.Squash, Lower: st.Lower,
					Upper: st.Upper, Count: st.Count, Decimal: st.Decimal}
				if st.Replace != (ReplaceStep{}) {
					es.Replace = &extract.Replace{Regex: st.Replace.Regex, With: st.Replace.With}
				}
				ef.Process = append(ef.Process, es)
			}
			er.Fields = append(er.Fields, ef)
		}
		out[i] = er
	}
	return out
}

// FollowRules is scraper.follow as the extract package takes it.
func (c *Config) FollowRules() []extract.Follow {
	out := make([]extract.Follow, len(c.Scraper.Follow))
	for i, f := range c.Scraper.Follow {
		out[i] = extract.Follow{CSS: f.CSS, XPath: f.XPath, JSON: f.JSON, Attr: f.Attr, Kind: f.Kind}
	}
	return out
}

// compileExtract compiles the extract rules and the follow selectors the
// way a worker will: extract.Compile decides what a valid rule is, and each
// of its problems is reported here at its key and line. What is the
// config's own is checked here: the tables the SQL sinks make carry
// records.table_prefix.
func (c *Config) compileExtract(p *problems) {
	if len(c.Extract) > 0 {
		_, err := extract.Compile(c.ExtractRules(), extract.Options{})
		c.extractProblems(p, err, c.extractPath)
		if pre := c.Records.TablePrefix; pre != "" {
			for i, r := range c.Extract {
				if record.ValidName(r.Name) != nil {
					continue // reported as it is
				}
				if err := record.CheckSchema(record.Schema{Rule: pre + r.Name}); err != nil {
					addOnce(p, fmt.Sprintf("extract[%d].name", i), "%v (records.table_prefix %s)", err, quote(pre))
				}
			}
		}
	}
	if len(c.Scraper.Follow) > 0 {
		_, err := extract.CompileFollow(c.FollowRules(), extract.Options{})
		c.extractProblems(p, err, func(e *extract.Error) string { return keyPath(fmt.Sprintf("scraper.follow[%d]", e.Rule), e.Key) })
	}
}

// extractPath is the key path of a problem extract.Compile found: a
// field's name is its key under fields, so a problem of the name is the
// field's own.
func (c *Config) extractPath(e *extract.Error) string {
	path := fmt.Sprintf("extract[%d]", e.Rule)
	if e.Field >= 0 && e.Rule < len(c.Extract) && e.Field < len(c.Extract[e.Rule].Fields) {
		path += ".fields." + c.Extract[e.Rule].Fields[e.Field].Name
		if e.Key == "name" {
			return path
		}
	}
	return keyPath(path, e.Key)
}

// keyPath is key under path; "" is path itself.
func keyPath(path, key string) string {
	if key == "" {
		return path
	}
	return path + "." + key
}

// extractProblems adds each *extract.Error joined in err at the key path
// path gives it, unless decoding reported a problem there already.
func (c *Config) extractProblems(p *problems, err error, pathOf func(*extract.Error) string) {
	if err == nil {
		return
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var ee *extract.Error
		if !errors.As(e, &ee) {
			p.add("extract", "%v", e)
			continue
		}
		path := pathOf(ee)
		if decoded(p, path) {
			continue // its value is a zero: the decoding problem says why
		}
		p.add(path, "%v", ee.Err)
	}
}

// decoded says whether decoding reported a problem at path, at a key
// above it or at a key below it.
func decoded(p *problems, path string) bool {
	for seen := range p.seen {
		if seen == path || under(path, seen) || under(seen, path) {
			return true
		}
	}
	return false
}

// addOnce adds a problem unless one is reported at path, at a key above it
// or at a key below it already.
func addOnce(p *problems, path, format string, args ...any) {
	for _, e := range p.list {
		if e.Path == path || under(path, e.Path) || under(e.Path, path) {
			return
		}
	}
	p.add(path, format, args...)
}

// under says whether key path sub is inside path.
func under(sub, path string) bool {
	return len(sub) > len(path) && sub[:len(path)] == path && (sub[len(path)] == '.' || sub[len(path)] == '[')
}
