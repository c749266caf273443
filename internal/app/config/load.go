package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"
)

// maxConfigSize bounds what Parse reads: a config is a few KiB; seed lists
// belong in seed files.
const maxConfigSize = 16 << 20

// lookupFunc reads an environment variable (os.LookupEnv in production).
type lookupFunc func(string) (string, bool)

// Load reads the config file at path and returns it expanded, overridden by
// DISTSCRAPE_* variables, defaulted and validated. Every error wraps
// ErrInvalid.
func Load(path string) (*Config, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse is Load for a config already in memory; name is used in error
// positions ("crawl.yaml:12").
func Parse(data []byte, name string) (*Config, error) {
	return parse(data, name, os.LookupEnv)
}

// Decode reads a config without defaults or validation, for callers that
// apply flags before calling ApplyDefaults and Validate themselves. Syntax,
// type, unknown-key, ${VAR} and DISTSCRAPE_* errors are still reported.
func Decode(data []byte, name string) (*Config, error) {
	cfg, p := decode(data, name, os.LookupEnv)
	if err := p.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// DecodeFile is Decode for a file.
func DecodeFile(path string) (*Config, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(data, path)
}

// readFile says what is wrong with the file in the user's words ("config
// file nope.yaml: not found"), not the syscall's ("open nope.yaml: ...").
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err == nil {
		defer f.Close()
		var data []byte
		if data, err = io.ReadAll(io.LimitReader(f, maxConfigSize+1)); err == nil {
			return data, nil
		}
	}
	var why string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "not found"
	case errors.Is(err, fs.ErrPermission):
		why = "permission denied"
	case errors.Is(err, syscall.EISDIR):
		why = "is a directory, not a file"
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is already in the message
		}
		why = err.Error()
	}
	return nil, &fileError{msg: fmt.Sprintf("config file %s: %s", path, why), err: err}
}

// fileError is a config file that cannot be read: ErrInvalid (exit 2), and
// the cause for errors.Is (fs.ErrNotExist), in words of its own.
type fileError struct {
	msg string
	err error
}

func (e *fileError) Error() string   { return e.msg }
func (e *fileError) Unwrap() []error { return []error{ErrInvalid, e.err} }

func parse(data []byte, name string, env lookupFunc) (*Config, error) {
	cfg, p := decode(data, name, env)
	if len(p.list) > 0 && cfg == nil {
		return nil, p.err()
	}
	checkExplicitZeros(cfg, p, env)
	checkDriverZeros(cfg, p, env)
	cfg.ApplyDefaults()
	checkKindKeys(cfg, p, env)
	cfg.validate(p)
	if err := p.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// decode turns YAML into a Config, collecting every problem. It returns a nil
// Config only when the file is not YAML at all.
func decode(data []byte, name string, env lookupFunc) (*Config, *problems) {
	p := &problems{file: name, lines: map[string]int{}, seen: map[string]bool{}}
	if len(data) > maxConfigSize {
		p.add("", "config is larger than %d bytes", maxConfigSize)
		return nil, p
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := safeDecode(dec, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.add("", "empty config (it needs at least \"crawl: NAME\")")
		} else {
			p.addYAML(err)
		}
		return nil, p
	}
	var extra yaml.Node
	if err := safeDecode(dec, &extra); err == nil {
		p.addAt("", extra.Line, "more than one YAML document (---); a config holds one crawl")
	} else if !errors.Is(err, io.EOF) {
		p.addYAML(err)
	}
	cfg := &Config{}
	d := &decoder{p: p, env: env}
	if len(doc.Content) == 1 {
		root := resolve(doc.Content[0])
		if root.Kind != yaml.MappingNode { // not a config at all: say only that
			p.addAt("", root.Line, "expected a mapping of keys (crawl: NAME, tracker: ...), got %s", kindWord(root))
			return nil, p
		}
		d.value(root, reflect.ValueOf(cfg).Elem(), "", 0)
	}
	cfg.secrets, p.secrets = d.secrets, d.secrets
	applyEnv(cfg, env, p)
	d.decodeDrivers(cfg)
	return cfg, p
}

// safeDecode turns a panic inside the YAML library into an error: a config
// file, however odd, must never crash the program.
func safeDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: cannot parse: %v", r)
		}
	}()
	return dec.Decode(n)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// addYAML reports a YAML syntax error as "file:line: message".
func (p *problems) addYAML(err error) {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		p.addAt("", line, "%s", msg[len(m[0]):])
		return
	}
	p.add("", "%s", strings.TrimPrefix(msg, "yaml: "))
}

// maxMergeDepth bounds YAML merge keys (<<), which may refer to themselves.
const maxMergeDepth = 8

// maxMergedPairs bounds the key/value pairs merge keys may produce, so
// nested merges of merges cannot blow up like a billion-laughs document.
const maxMergedPairs = 100000

type decoder struct {
	p        *problems
	env      lookupFunc
	secrets  []string // values of ${VAR}, in order of use
	merged   int      // pairs produced by merge keys so far
	overflow bool     // merges went past a limit; stop expanding them
	// stash holds the keys of each driver section (by name) that are its
	// kind's, until the kind is known (decodeDrivers).
	stash map[string][][2]*yaml.Node
}

// recordEnv is d.env that remembers every value it returns: a value that
// came from the environment is a secret (see Config.Redactor).
func (d *decoder) recordEnv(name string) (string, bool) {
	v, ok := d.env(name)
	if ok {
		d.secrets = append(d.secrets, v)
	}
	return v, ok
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// value decodes n into v, reporting problems under path.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string, depth int) {
	for i := 0; n.Kind == yaml.AliasNode && i < maxMergeDepth; i++ {
		n = n.Alias
	}
	if n.Kind == yaml.AliasNode {
		d.p.addAt(path, n.Line, "alias chain too long")
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // "key:" or "key: ~" keeps the default
	}
	if v.Type() == proxyType && n.Kind == yaml.ScalarNode {
		d.value(n, v.Field(0), path, depth) // a plain URL: a proxy of no country
		return
	}
	if v.Type() == stepType && n.Kind == yaml.ScalarNode {
		d.stepWord(n, v, path) // "lower": a step with no argument
		return
	}
	if v.Type() == fieldsType {
		d.fieldsFrom(n, v, path, depth)
		return
	}
	if isScalarType(v.Type()) {
		if n.Kind != yaml.ScalarNode {
			d.p.addAt(path, n.Line, "expected %s, got %s", typeWord(v.Type()), kindWord(n))
			return
		}
		s, err := expand(n.Value, d.recordEnv)
		if err == nil {
			err = setScalar(v, s)
		}
		if err != nil {
			d.p.addAt(path, n.Line, "%v", err)
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.structFrom(n, v, path, depth)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.p.addAt(path, n.Line, "expected a list, got %s", kindWord(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			ip := fmt.Sprintf("%s[%d]", path, i)
			d.p.lines[ip] = item.Line
			d.value(item, s.Index(i), ip, depth)
		}
		v.Set(s)
	case reflect.Map:
		d.mapFrom(n, v, path, depth)
	default:
		d.p.addAt(path, n.Line, "cannot decode into %s", v.Type())
	}
}

// pairs lists a mapping's key/value pairs with merge keys (<<) expanded
// first, so explicit keys override merged ones. mdepth counts nested merges.
func (d *decoder) pairs(n *yaml.Node, path string, mdepth int) (merged, own [][2]*yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!merge" {
			own = append(own, [2]*yaml.Node{k, val})
			continue
		}
		if d.overflow {
			return nil, own
		}
		if mdepth >= maxMergeDepth {
			d.p.addAt(path, k.Line, "merge keys (<<) nested more than %d deep", maxMergeDepth)
			d.overflow = true
			return nil, own
		}
		srcs := []*yaml.Node{val}
		if r := resolve(val); r.Kind == yaml.SequenceNode {
			srcs = r.Content
		}
		for _, src := range srcs {
			src = resolve(src)
			if src.Kind != yaml.MappingNode {
				d.p.addAt(path, k.Line, "merge key (<<) must refer to a mapping")
				continue
			}
			m, o := d.pairs(src, path, mdepth+1)
			if d.overflow {
				return nil, own
			}
			if d.merged += len(m) + len(o); d.merged > maxMergedPairs {
				d.p.addAt(path, k.Line, "merge keys (<<) expand to more than %d keys", maxMergedPairs)
				d.overflow = true
				return nil, own
			}
			merged = append(append(merged, m...), o...)
		}
	}
	return merged, own
}

func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && i < maxMergeDepth; i++ {
		n = n.Alias
	}
	return n
}

// removedKeys are keys a config may still hold that no longer exist, with
// what to do instead: a did-you-mean would point elsewhere.
var removedKeys = map[string]string{
	"records.batch": "remove it; a sink writes the records of the pages a worker completes together " +
		"in one transaction (their number follows tracker.batch)",
}

func (d *decoder) structFrom(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n.Kind != yaml.MappingNode {
		d.p.addAt(path, n.Line, "expected a mapping (key: value), got %s", kindWord(n))
		return
	}
	fields := fieldsOf(v.Type())
	merged, own := d.pairs(n, path, 0)
	seen := map[string]bool{}
	for i, kv := range append(merged, own...) {
		k, val := kv[0], kv[1]
		isOwn := i >= len(merged)
		full := join(path, k.Value)
		if k.Kind != yaml.ScalarNode {
			d.p.addAt(path, k.Line, "keys must be plain names, got %s", kindWord(k))
			continue
		}
		idx, ok := fields[k.Value]
		if _, gone := removedKeys[full]; !ok && !gone && path != "" && sectionNamed(path) != nil {
			if isOwn && seen[k.Value] {
				d.p.addAt(full, k.Line, "duplicate key")
				continue
			}
			seen[k.Value] = seen[k.Value] || isOwn
			d.stashDriverKey(path, kv) // its kind's key, or another's: decodeDrivers says
			continue
		}
		if why, gone := removedKeys[full]; !ok && gone {
			d.p.addAt(full, k.Line, "unknown key: %s", why)
			continue
		}
		if !ok {
			d.p.addAt(full, k.Line, "unknown key%s", suggest(k.Value, path, v.Type()))
			continue
		}
		if isOwn {
			if seen[k.Value] {
				d.p.addAt(full, k.Line, "duplicate key")
				continue
			}
			seen[k.Value] = true
		}
		d.p.lines[full] = k.Line
		d.value(val, v.Field(idx), full, depth+1)
	}
}

var fieldsType = reflect.TypeOf(Fields(nil))

// fieldsFrom decodes a rule's fields, a mapping of name to field, keeping
// the file's order (the columns' order).
func (d *decoder) fieldsFrom(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n.Kind != yaml.MappingNode {
		d.p.addAt(path, n.Line, "expected a mapping of field names (title: {css: h1}), got %s", kindWord(n))
		return
	}
	var out Fields
	seen := map[string]bool{}
	merged, own := d.pairs(n, path, 0)
	for _, kv := range append(merged, own...) {
		k, val := kv[0], kv[1]
		if k.Kind != yaml.ScalarNode {
			d.p.addAt(path, k.Line, "keys must be plain names, got %s", kindWord(k))
			continue
		}
		full := join(path, k.Value)
		if seen[k.Value] {
			d.p.addAt(full, k.Line, "duplicate field")
			continue
		}
		seen[k.Value] = true
		d.p.lines[full] = k.Line
		f := Field{Name: k.Value}
		d.value(val, reflect.ValueOf(&f).Elem(), full, depth+1)
		out = append(out, f)
	}
	v.Set(reflect.ValueOf(out))
}

func (d *decoder) mapFrom(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n.Kind != yaml.MappingNode {
		d.p.addAt(path, n.Line, "expected a mapping (key: value), got %s", kindWord(n))
		return
	}
	m := reflect.MakeMap(v.Type())
	merged, own := d.pairs(n, path, 0)
	for _, kv := range append(merged, own...) {
		k, val := kv[0], kv[1]
		if k.Kind != yaml.ScalarNode {
			d.p.addAt(path, k.Line, "keys must be plain names, got %s", kindWord(k))
			continue
		}
		full := join(path, k.Value)
		d.p.lines[full] = k.Line
		ev := reflect.New(v.Type().Elem()).Elem()
		d.value(val, ev, full, depth+1)
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), ev)
	}
	v.Set(m)
}

func kindWord(n *yaml.Node) string {
	switch resolve(n).Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a scalar"
	}
	return "nothing"
}

var stepType = reflect.TypeOf(ProcessStep{})

// stepWord decodes a process step written as one word (lower).
func (d *decoder) stepWord(n *yaml.Node, v reflect.Value, path string) {
	st, ok := stepWords[n.Value]
	if !ok {
		d.p.addAt(path, n.Line, "%s is not a step: want squash, lower, upper or count, or one of split, join, replace, decimal with its argument ({split: ','})", quote(n.Value))
		return
	}
	v.Set(reflect.ValueOf(st))
}
