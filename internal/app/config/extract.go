package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"regexp"
	"slices"
	"strings"

	"github.com/distscrape/distscrape/extract"
	"github.com/distscrape/distscrape/record"
)

// ExtractRule is one `extract:` entry: what one rule takes out of the
// pages whose key matches, into the table named Name.
type ExtractRule struct {
	Name  string `yaml:"name"`  // required: the rule's table (record.ValidName)
	Match string `yaml:"match"` // required: a regex of the item keys (URLs or IDs)
	// Each, when set, yields one record per element it selects (a product
	// list: one record per product); fields are then relative to it.
	Each      Selector `yaml:"each"`
	Fields    Fields   `yaml:"fields"`     // required; columns in file order
	OnInvalid string   `yaml:"on_invalid"` // fail (default: the page fails) | skip (the record is dropped) | keep (stored with status invalid)
}

// Selector picks elements: exactly one of CSS, XPath or JSON.
type Selector struct {
	CSS   string `yaml:"css"`
	XPath string `yaml:"xpath"`
	JSON  string `yaml:"json"` // a jq expression (gojq) over a JSON body
}

// Field is one column of a rule, written as `name: {css: ..., type: ...}`
// under fields: the YAML mapping's order is the columns' order.
type Field struct {
	Name     string `yaml:"-"` // the key under fields
	CSS      string `yaml:"css"`
	Attr     string `yaml:"attr"` // css or xpath: the attribute's value of the elements selected instead of their text
	XPath    string `yaml:"xpath"`
	JSON     string `yaml:"json"`
	Regex    string `yaml:"regex"` // over the body: the group named like the field, else the first group, else the match
	Text     string `yaml:"text"`  // main: the page's readable main text
	All      bool   `yaml:"all"`   // every match, as a list
	Type     string `yaml:"type"`  // string (default) | int | float | bool | time | url
	Required bool   `yaml:"required"`
	Default  string `yaml:"default"` // the value when nothing is found, of the field's type
	// Process are the steps the values found pass through, in order,
	// before the conversion to Type (extract.Step).
	Process    []ProcessStep `yaml:"process"`
	KeepSpaces bool          `yaml:"keep_spaces"` // a string keeps its leading and trailing white space
}

// ProcessStep is one step of a field's process: list, exactly one key, or
// one of the words squash, lower, upper, count.
type ProcessStep struct {
	Split   string      `yaml:"split"`   // each value into its parts between this
	Join    string      `yaml:"join"`    // the values into one, this between them
	Replace ReplaceStep `yaml:"replace"` // {regex, with}: in each value
	Squash  bool        `yaml:"squash"`  // runs of white space into one space
	Lower   bool        `yaml:"lower"`
	Upper   bool        `yaml:"upper"`
	Count   bool        `yaml:"count"`   // the number of values (type int)
	Decimal string      `yaml:"decimal"` // "," or ".": the numbers' decimal separator
}

// ReplaceStep replaces every match of Regex with With ($1, ${name}).
type ReplaceStep struct {
	Regex string `yaml:"regex"`
	With  string `yaml:"with"`
}

// stepWords are the steps written as one word.
var stepWords = map[string]ProcessStep{"squash": {Squash: true}, "lower": {Lower: true}, "upper": {Upper: true}, "count": {Count: true}}

// Fields are a rule's fields in the order of the file.
type Fields []Field

// Records is the sink of the extracted records.
type Records struct {
	// Kind is a registered record sink: jsonl (default when extract has
	// rules) | csv | parquet | sqlite | postgres | mysql.
	Kind string `yaml:"kind"`
	// Driver holds the keys of Kind's sink (record.Section): dir, path,
	// url, ...; see docs/config.md.
	Driver      record.Section `yaml:",inline"`
	TablePrefix string         `yaml:"table_prefix"` // sinks with tables (record.Driver.Tables): before each rule's name, e.g. "shop_"
}

// Follow is one scraper.follow entry: exactly one selector; Attr with CSS
// (default href) or XPath; Kind url (link crawls) or id (ID crawls), by
// default the crawl's. extract.CompileFollow checks it.
type Follow struct {
	CSS   string `yaml:"css"`
	XPath string `yaml:"xpath"`
	JSON  string `yaml:"json"`
	Attr  string `yaml:"attr"`
	Kind  string `yaml:"kind"`
}

// RequestRule is one scraper.requests entry. {key} is the item's key and
// {id} an ID crawl's ID, in the body and the header values; in a JSON body
// (Content-Type application/json or +json, the default when the body
// starts with { or [) they are JSON-escaped.
type RequestRule struct {
	Match   string            `yaml:"match"`  // a regex of the item keys; "" = every item
	Method  string            `yaml:"method"` // default GET; GET, POST, PUT, PATCH or DELETE
	Headers map[string]string `yaml:"headers"`
	Body    string            `yaml:"body"`
}

// Defaults of the records section.
const (
	DefaultRecordsDir  = "out/records"
	DefaultRecordsPath = "out/records.db"
	DefaultRotateBytes = 256 * MiB
)

// RequestMethods are the methods scraper.requests accepts.
var RequestMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

func (c *Config) applyExtractDefaults() {
	for i := range c.Extract {
		r := &c.Extract[i]
		setStr(&r.OnInvalid, "fail")
		for j := range r.Fields {
			setStr(&r.Fields[j].Type, string(record.String))
		}
	}
	for i := range c.Scraper.Follow {
		f := &c.Scraper.Follow[i]
		if c.Scraper.Kind == "id" {
			setStr(&f.Kind, "id")
		}
		setStr(&f.Kind, "url")
		if f.CSS != "" {
			setStr(&f.Attr, "href")
		}
	}
	for i := range c.Scraper.Requests {
		setStr(&c.Scraper.Requests[i].Method, "GET")
	}
}

// validateExtract checks the extract section (extract.Compile is the one
// definition of a valid rule: compileExtract reports its problems at their
// keys) and the records section, which is the config's own.
func (c *Config) validateExtract(p *problems) {
	c.compileExtract(p)
	c.validateRecords(p)
}

var prefixRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// validateRecords checks the records section's own keys (validateDrivers
// checks its kind's).
func (c *Config) validateRecords(p *problems) {
	r := c.Records
	switch {
	case r.Kind == "" && r.TablePrefix != "":
		p.add("records.table_prefix", "no records are written: the config has no extract rules")
	case r.Kind == "":
	case len(c.Extract) == 0:
		p.add("records.kind", "no records are written: the config has no extract rules")
	}
	if d, ok := record.Lookup(r.Kind); ok && !d.Tables && r.TablePrefix != "" {
		var tables []string
		for _, k := range record.Kinds() {
			if d, _ := record.Lookup(k); d.Tables {
				tables = append(tables, k)
			}
		}
		p.add("records.table_prefix", "applies to records.kind %s only, and records.kind is %s: remove it (or set the kind it belongs to)",
			orList(tables), r.Kind)
	}
	if r.TablePrefix != "" && !prefixRE.MatchString(r.TablePrefix) {
		p.add("records.table_prefix", "%s: use lower-case letters, digits and '_', starting with a letter or '_'", quote(r.TablePrefix))
	}
}

// validateFollow checks what of scraper.follow is about the crawl: an
// entry's kind against scraper.kind (extract.CompileFollow checks the
// rest, in compileExtract).
func (s *Scraper) validateFollow(p *problems) {
	for i, f := range s.Follow {
		path := fmt.Sprintf("scraper.follow[%d].kind", i)
		switch {
		case f.Kind == extract.KindID && s.Kind != "id":
			p.add(path, "id needs scraper.kind id: the items of a link crawl are URLs")
		case f.Kind == extract.KindURL && s.Kind == "id":
			p.add(path, "url needs scraper.kind link: the items of an ID crawl are IDs")
		}
	}
}

var placeholderRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

func (s *Scraper) validateRequests(p *problems) {
	for i, r := range s.Requests {
		path := fmt.Sprintf("scraper.requests[%d]", i)
		checkRegex(p, path+".match", r.Match)
		if !slices.Contains(RequestMethods, r.Method) {
			p.add(path+".method", "unknown method %s (want %s, in capitals)", quote(r.Method), strings.Join(RequestMethods, ", "))
		} else if r.Body != "" && r.Method == "GET" {
			p.add(path+".body", "a GET has no body: set method (POST, PUT, ...)")
		}
		s.checkPlaceholders(p, path+".body", r.Body)
		ct := ""
		for _, name := range slices.Sorted(maps.Keys(r.Headers)) {
			val, hp := r.Headers[name], path+".headers."+name
			if !validHeaderName(name) {
				p.add(hp, "%s is not a valid header name", quote(name))
			}
			if strings.ContainsFunc(val, func(r rune) bool { return r == '\r' || r == '\n' || r == 0 }) {
				p.add(hp, "value contains a line break or NUL")
			}
			s.checkPlaceholders(p, hp, val)
			if strings.EqualFold(name, "Content-Type") {
				ct = val
			}
		}
		enc, err := BodyEncoding(ct, r.Body)
		switch {
		case err != nil && placeholderRE.MatchString(r.Body):
			p.add(path+".body", "%v", err)
		case enc == "json":
			probe := placeholderRE.ReplaceAllString(r.Body, "x")
			if !json.Valid([]byte(probe)) {
				p.add(path+".body", "not valid JSON (the Content-Type is JSON); a placeholder goes inside a string: {\"id\": \"{id}\"}")
			}
		}
	}
}

// checkPlaceholders allows {key} everywhere and {id} in ID crawls.
func (s *Scraper) checkPlaceholders(p *problems, path, tmpl string) {
	for _, m := range placeholderRE.FindAllStringSubmatch(tmpl, -1) {
		switch {
		case m[1] == "key":
		case m[1] == "id" && s.Kind == "id":
		case m[1] == "id":
			p.add(path, "{id} is an ID crawl's (scraper.kind id); use {key}, the item's URL")
		default:
			p.add(path, "unknown placeholder {%s} (want {key} or {id})", m[1])
		}
	}
}

// BodyEncoding says how a request template's placeholders are escaped in
// its body: "json", "form", "xml" or "text", by its Content-Type; without
// one, "json" for a body starting with { or [, else "form" (the encoding
// curl -d and HTML forms send). A Content-Type with no known escaping
// (multipart, a binary type) is an error: a value there could not be
// kept one value.
func BodyEncoding(contentType, body string) (string, error) {
	if contentType == "" {
		b := strings.TrimSpace(body)
		if strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[") {
			return "json", nil
		}
		return "form", nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	switch {
	case err != nil:
		return "", fmt.Errorf("Content-Type %s: %v", quote(contentType), err)
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return "json", nil
	case mt == "application/x-www-form-urlencoded":
		return "form", nil
	case mt == "application/xml" || mt == "text/xml" || mt == "text/html" || strings.HasSuffix(mt, "+xml"):
		return "xml", nil
	case mt == "text/plain":
		return "text", nil
	}
	return "", fmt.Errorf("placeholders cannot be escaped for Content-Type %s: use JSON, application/x-www-form-urlencoded, XML or text/plain", quote(mt))
}
