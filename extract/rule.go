package extract

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/andybalholm/cascadia"
	"github.com/antchfx/xpath"
	"github.com/itchyny/gojq"

	"github.com/distscrape/distscrape/record"
)

// Rule is one `extract:` rule: a table of fields taken from the pages whose
// URL matches.
type Rule struct {
	Name      string   // the rule's table name; record.ValidName and record.CheckSchema
	Match     string   // required: a regex of the item keys (URLs or IDs), like the other rules; "." for every page
	Each      Selector // optional: one record per element it yields
	Fields    []Field
	OnInvalid string // OnInvalidFail (default), OnInvalidSkip, OnInvalidKeep
}

// What a rule does with an invalid record.
const (
	OnInvalidFail = "fail" // the page fails with ErrInvalid
	OnInvalidSkip = "skip" // the record is dropped
	OnInvalidKeep = "keep" // the record is kept with Status record.Invalid
)

// Selector picks the elements of a rule's `each`: exactly one of its
// fields is set.
type Selector struct{ CSS, XPath, JSON string }

// Field is one column of a rule: where its value is, and its type.
type Field struct {
	Name     string // record.ValidName, not a reserved column, unique in its rule
	CSS      string // exactly one of CSS, XPath, JSON, Regex, Text
	Attr     string // with CSS or XPath: the attribute of the elements selected; default their text
	XPath    string
	JSON     string // a jq expression (gojq)
	Regex    string // group "value", else the first group, else the whole match
	Text     string // "main": the page's readable main text
	All      bool   // a list of every value found
	Type     record.Type
	Required bool
	Default  string // converted to Type at Compile
	// Process are the steps the values found pass through before the
	// conversion (process.go).
	Process []Step
	// KeepSpaces keeps a string value's leading and trailing white space
	// (values are trimmed otherwise).
	KeepSpaces bool
}

// TextMain is the one value of Field.Text.
const TextMain = "main"

// Options bound the work of one page.
type Options struct {
	Crawl    string        // Record.Crawl
	MaxBody  int64         // a longer body is ErrBody; 0: DefaultMaxBody
	MaxNodes int           // elements of a page, values of a selector; 0: DefaultMaxNodes
	Budget   time.Duration // time of one page's selectors and regexes; 0: DefaultBudget
}

// Defaults of Options.
const (
	DefaultMaxBody  = 16 << 20
	DefaultMaxNodes = 100_000
	DefaultBudget   = 2 * time.Second
)

func (o Options) withDefaults() Options {
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = DefaultMaxNodes
	}
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	return o
}

// Error locates a bad rule or field, for the config's file:line errors.
type Error struct {
	Rule   int    // index of the rule (of the Follow, for CompileFollow)
	Field  int    // index of the field; -1: the rule itself
	Key    string // the YAML key at fault ("css", "each.xpath"); "": the entry itself
	Follow bool   // from CompileFollow: Rule indexes the follow list
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Follow {
		fmt.Fprintf(&b, "follow[%d]", e.Rule)
	} else {
		fmt.Fprintf(&b, "extract[%d]", e.Rule)
		if e.Field >= 0 {
			fmt.Fprintf(&b, ".fields[%d]", e.Field)
		}
	}
	if e.Key != "" {
		b.WriteString("." + e.Key)
	}
	return b.String() + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Extractor is a compiled rule set. Safe for concurrent use.
type Extractor struct {
	rules  []*rule
	opt    Options
	counts []counter
}

type counter struct {
	pages, records, invalid atomic.Int64
	fields                  []fieldCounter // by field, in rule order
}

type fieldCounter struct{ found, empty atomic.Int64 }

// Count is what a rule did since Compile.
type Count struct {
	Pages   int64 // pages whose URL it matched
	Records int64 // records returned (valid, and invalid ones kept)
	Invalid int64 // invalid records, whatever on_invalid did with them
}

// FieldCount is how often a field found a value: of the records made
// (every one, whether stored, dropped or failing its page), those where
// it found one and those where it found none (a default taken counts as
// none).
type FieldCount struct {
	Found int64 `json:"found"`
	Empty int64 `json:"empty"`
}

// kind is where a field's value comes from.
type kind int

const (
	kindCSS kind = iota
	kindXPath
	kindJSON
	kindRegex
	kindText
)

// keys names each kind's YAML key.
var keys = [...]string{kindCSS: "css", kindXPath: "xpath", kindJSON: "json", kindRegex: "regex", kindText: "text"}

type rule struct {
	name      string
	match     *rx
	each      *sel
	fields    []*field
	onInvalid string
	needHTML  bool // css, xpath or text fields, or an each by css or xpath
	needJSON  bool
	needText  bool
	schema    record.Schema
}

// sel is one compiled selector.
type sel struct {
	kind   kind
	css    cascadia.SelectorGroup
	scope  bool // css ":scope": the element itself
	xpath  *xpath.Expr
	xpaths *sync.Pool // copies of xpath, one per page at a time
	jq     *gojq.Code
	re     *rx
}

type field struct {
	name string
	sel
	attr     string
	all      bool
	typ      record.Type
	required bool
	def      any // nil: none
	steps    []step
	keep     bool // KeepSpaces
	gather   bool // every value found goes to the steps (a join or count), not the first only
}

// Compile checks and compiles rules: it is the one definition of a valid
// rule, which the config's validation reports at its keys. It reports
// every problem at once: an errors.Join of *Error.
func Compile(rules []Rule, opt Options) (*Extractor, error) {
	e := &Extractor{opt: opt.withDefaults()}
	var errs []error
	bad := func(r, f int, key string, err error) {
		errs = append(errs, &Error{Rule: r, Field: f, Key: key, Err: err})
	}
	names := map[string]int{}
	for i, r := range rules {
		cr := &rule{name: r.Name, onInvalid: r.OnInvalid}
		if err := checkRuleName(r.Name); err != nil {
			bad(i, -1, "name", err)
		} else if j, dup := names[r.Name]; dup {
			bad(i, -1, "name", fmt.Errorf("%q is also the name of extract[%d]: each rule is a table of its own", r.Name, j))
		} else {
			names[r.Name] = i
		}
		if r.Match == "" {
			// Required, as in the other rules of a crawl: a rule that ran on
			// every page would fail the seeds and listings its required
			// fields are not on.
			bad(i, -1, "match", errors.New("required: a regex of the item keys (URLs or IDs) the rule applies to; '.' for every page"))
		} else if m, err := compileRx(r.Match); err != nil {
			bad(i, -1, "match", err)
		} else {
			cr.match = m
		}
		switch r.OnInvalid {
		case "":
			cr.onInvalid = OnInvalidFail
		case OnInvalidFail, OnInvalidSkip, OnInvalidKeep:
		default:
			bad(i, -1, "on_invalid", fmt.Errorf("unknown value %q (want fail, skip or keep)", r.OnInvalid))
		}
		if r.Each != (Selector{}) {
			s, key, err := compileEach(r.Each)
			if err != nil {
				bad(i, -1, key, err)
			}
			cr.each = s
		}
		if len(r.Fields) == 0 {
			bad(i, -1, "fields", errors.New("required: a rule takes at least one field, e.g. {title: {css: h1}}"))
		}
		seen := map[string]int{}
		for j, f := range r.Fields {
			cf, fieldErrs := compileField(f, cr.each)
			for _, fe := range fieldErrs {
				bad(i, j, fe.Key, fe.Err)
			}
			if k, dup := seen[f.Name]; dup && f.Name != "" {
				bad(i, j, "name", fmt.Errorf("%q is the name of field %d already", f.Name, k))
			}
			seen[f.Name] = j
			if cf == nil {
				continue
			}
			cr.fields = append(cr.fields, cf)
			cr.schema.Fields = append(cr.schema.Fields, record.Field{Name: cf.name, Type: cf.typ, All: cf.all})
			switch cf.kind {
			case kindCSS, kindXPath:
				cr.needHTML = true
			case kindJSON:
				cr.needJSON = true
			case kindText:
				cr.needHTML, cr.needText = true, true
			}
		}
		if cr.each != nil {
			switch cr.each.kind {
			case kindCSS, kindXPath:
				cr.needHTML = true
			case kindJSON:
				cr.needJSON = true
			}
		}
		cr.schema.Rule = r.Name
		e.rules = append(e.rules, cr)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	e.counts = make([]counter, len(e.rules))
	for i, r := range e.rules {
		e.counts[i].fields = make([]fieldCounter, len(r.fields))
	}
	return e, nil
}

// Schemas returns one record.Schema per rule, in order: the tables the
// record sinks create.
func (e *Extractor) Schemas() []record.Schema {
	out := make([]record.Schema, len(e.rules))
	for i, r := range e.rules {
		out[i] = record.Schema{Rule: r.schema.Rule, Fields: slices.Clone(r.schema.Fields)}
	}
	return out
}

// Counts returns each rule's counts by rule name, since Compile.
func (e *Extractor) Counts() map[string]Count {
	out := make(map[string]Count, len(e.rules))
	for i, r := range e.rules {
		c := &e.counts[i]
		out[r.name] = Count{Pages: c.pages.Load(), Records: c.records.Load(), Invalid: c.invalid.Load()}
	}
	return out
}

// FieldCounts returns, by rule name then field name, how often each field
// found a value since Compile.
func (e *Extractor) FieldCounts() map[string]map[string]FieldCount {
	out := make(map[string]map[string]FieldCount, len(e.rules))
	for i, r := range e.rules {
		fc := make(map[string]FieldCount, len(r.fields))
		for j, f := range r.fields {
			c := &e.counts[i].fields[j]
			fc[f.name] = FieldCount{Found: c.found.Load(), Empty: c.empty.Load()}
		}
		out[r.name] = fc
	}
	return out
}

// keyErr is a problem of one field, under its YAML key.
type keyErr struct {
	Key string
	Err error
}

// compileField compiles f; each is its rule's compiled `each` (nil when
// none, or when it did not compile). It returns nil and every problem
// found when f is bad.
func compileField(f Field, each *sel) (*field, []keyErr) {
	var errs []keyErr
	bad := func(key string, err error) { errs = append(errs, keyErr{key, err}) }
	if err := record.ValidName(f.Name); err != nil {
		bad("name", fmt.Errorf("field %w", err))
	} else if slices.Contains(record.ReservedColumns, f.Name) {
		bad("name", fmt.Errorf("%q is a column every record has (%s): choose another name", f.Name, strings.Join(record.ReservedColumns, ", ")))
	} else if who, ok := record.SystemColumns[f.Name]; ok {
		bad("name", fmt.Errorf("%q is a system column of %s: choose another name", f.Name, who))
	}
	cf := &field{name: f.Name, attr: f.Attr, all: f.All, typ: f.Type, required: f.Required, keep: f.KeepSpaces}
	if cf.typ == "" {
		cf.typ = record.String
	}
	if !slices.Contains(record.Types, cf.typ) {
		bad("type", fmt.Errorf("unknown value %q (want %s)", f.Type, typeList()))
	}
	steps, stepErrs := compileSteps(f.Process, cf.typ, f.All)
	cf.steps, errs = steps, append(errs, stepErrs...)
	for _, st := range steps {
		cf.gather = cf.gather || st.one
	}
	if f.KeepSpaces && cf.typ != record.String {
		bad("keep_spaces", fmt.Errorf("white space is kept in strings only: the field's type is %s", cf.typ))
	}
	var set []kind
	for k, v := range [...]string{kindCSS: f.CSS, kindXPath: f.XPath, kindJSON: f.JSON, kindRegex: f.Regex, kindText: f.Text} {
		if v != "" {
			set = append(set, kind(k))
		}
	}
	switch len(set) {
	case 0:
		msg := "no selector: a field takes one of css, xpath, json, regex or text"
		if f.Attr != "" {
			msg += " (attr names an attribute of the elements css or xpath select)"
		}
		bad("", errors.New(msg))
	case 1:
		s, err := compileSel(set[0], f.CSS, f.XPath, f.JSON, f.Regex, f.Text)
		if err != nil {
			bad(keys[set[0]], err)
		} else {
			cf.sel = *s
		}
	default:
		names := make([]string, len(set))
		for i, k := range set {
			names[i] = keys[k]
		}
		bad("", fmt.Errorf("%s given together: a field takes exactly one of css, xpath, json, regex or text", strings.Join(names, " and ")))
	}
	if len(set) == 1 {
		k := set[0]
		if f.Attr != "" && k != kindCSS && k != kindXPath {
			bad("attr", fmt.Errorf("%q: attr goes with css or xpath, not with %s", f.Attr, keys[k]))
		}
		if each != nil && !fits(each.kind, k) {
			bad(keys[k], fmt.Errorf("the rule's each is %s: its fields use %s", keys[each.kind], fitting(each.kind)))
		}
		if k == kindText && f.All {
			bad("all", errors.New("text: main is one value, not a list"))
		}
	}
	if f.Default != "" {
		switch {
		case f.All:
			bad("default", errors.New("a field with all takes no default"))
		case f.Required:
			bad("default", errors.New("a required field with a default is never missing: drop required or default"))
		case slices.Contains(record.Types, cf.typ):
			v, err := Convert(cf.typ, f.Default, nil)
			if err != nil {
				bad("default", err)
			}
			cf.def = v
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return cf, nil
}

// fits says whether a field of kind k can run inside an each of kind each.
func fits(each, k kind) bool {
	switch k {
	case kindCSS, kindXPath:
		return each == kindCSS || each == kindXPath
	case kindJSON:
		return each == kindJSON
	}
	return true
}

func fitting(each kind) string {
	if each == kindJSON {
		return "json, regex or text"
	}
	return "css, xpath, regex or text"
}

func typeList() string {
	s := make([]string, len(record.Types))
	for i, t := range record.Types {
		s[i] = string(t)
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// checkRuleName checks a rule's name as the name of a table every sink
// can make (record.CheckSchema without fields: they are checked apart).
func checkRuleName(name string) error {
	if name == "" {
		return errors.New("required: the rule's name, which names its table (e.g. product)")
	}
	if err := record.ValidName(name); err != nil {
		return err
	}
	return record.CheckSchema(record.Schema{Rule: name})
}
