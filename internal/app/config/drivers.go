package config

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/internal/redact"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/tracker"
)

// A driverSection is a section whose kind picks a registered driver
// (package driver): besides its own keys, it takes the keys of its kind's
// section. The config knows no driver; the drivers linked into the
// program (cmd/distscrape/drivers.go) are its kinds.
type driverSection struct {
	name  string
	kind  func(*Config) *string
	field func(*Config) reflect.Value // the section's Driver field
	kinds func() []string
	new   func(kind string) (any, bool) // an empty section of kind's driver
	// defaultKind is the kind of a section that names none: "" for none.
	defaultKind func(*Config) string
	// noKind is the problem of a driver's key in a section without a kind.
	noKind   string
	validate func(*Config, *driver.Problems)
	regErr   func() error
}

var driverSections = []driverSection{{
	name:  "tracker",
	kind:  func(c *Config) *string { return &c.Tracker.Kind },
	field: func(c *Config) reflect.Value { return reflect.ValueOf(&c.Tracker.Driver).Elem() },
	kinds: tracker.Kinds,
	new: func(kind string) (any, bool) {
		d, ok := tracker.Lookup(kind)
		return newSection(ok, d.New)
	},
	defaultKind: func(*Config) string { return "memory" },
	validate:    func(c *Config, p *driver.Problems) { c.Tracker.Driver.Validate(p) },
	regErr:      tracker.RegistryErr,
}, {
	name:  "saver",
	kind:  func(c *Config) *string { return &c.Saver.Kind },
	field: func(c *Config) reflect.Value { return reflect.ValueOf(&c.Saver.Driver).Elem() },
	kinds: saver.Kinds,
	new: func(kind string) (any, bool) {
		d, ok := saver.Lookup(kind)
		return newSection(ok, d.New)
	},
	defaultKind: func(*Config) string { return "file" },
	validate:    func(c *Config, p *driver.Problems) { c.Saver.Driver.Validate(p, c.SaverEnv("check")) },
	regErr:      saver.RegistryErr,
}, {
	name:  "records",
	kind:  func(c *Config) *string { return &c.Records.Kind },
	field: func(c *Config) reflect.Value { return reflect.ValueOf(&c.Records.Driver).Elem() },
	kinds: record.Kinds,
	new: func(kind string) (any, bool) {
		d, ok := record.Lookup(kind)
		return newSection(ok, d.New)
	},
	defaultKind: func(c *Config) string {
		if len(c.Extract) > 0 {
			return "jsonl"
		}
		return ""
	},
	noKind:   "no records are written: the config has no extract rules",
	validate: func(c *Config, p *driver.Problems) { c.Records.Driver.Validate(p) },
	regErr:   record.RegistryErr,
}}

func newSection[S any](ok bool, mk func() S) (any, bool) {
	if !ok || mk == nil {
		return nil, false
	}
	return mk(), true
}

func sectionNamed(name string) *driverSection {
	for i := range driverSections {
		if driverSections[i].name == name {
			return &driverSections[i]
		}
	}
	return nil
}

// keys maps each key of the section's drivers to its type and the kinds
// that have it.
func (ds *driverSection) keys() map[string]driverKey {
	out := map[string]driverKey{}
	for _, kind := range ds.kinds() {
		sec, _ := ds.new(kind)
		t := sectionType(sec)
		if t == nil {
			continue
		}
		for name, i := range fieldsOf(t) {
			k := out[name]
			k.typ = t.Field(i).Type
			k.kinds = append(k.kinds, kind)
			out[name] = k
		}
	}
	return out
}

type driverKey struct {
	typ   reflect.Type
	kinds []string
}

// sectionType is the struct type of a section (a pointer to a struct).
func sectionType(sec any) reflect.Type {
	t := reflect.TypeOf(sec)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	return t.Elem()
}

// current is the section of c for its kind: the one c holds when it is of
// that kind's driver, else a new empty one (nil for no driver).
func (ds *driverSection) current(c *Config) reflect.Value {
	f := ds.field(c)
	kind := *ds.kind(c)
	if kind == "" {
		return reflect.Value{}
	}
	sec, ok := ds.new(kind)
	if !ok || sectionType(sec) == nil {
		return reflect.Value{}
	}
	if !f.IsNil() && f.Elem().Type() == reflect.TypeOf(sec) {
		return f.Elem()
	}
	f.Set(reflect.ValueOf(sec))
	return f.Elem()
}

// stashDriverKey keeps a key of a driver section that is none of the
// section's own, to decode once the kind is known (decodeDrivers).
func (d *decoder) stashDriverKey(section string, kv [2]*yaml.Node) {
	if d.stash == nil {
		d.stash = map[string][][2]*yaml.Node{}
	}
	d.stash[section] = append(d.stash[section], kv)
}

// decodeDrivers decodes the driver keys of each driver section into its
// kind's section, the file's then the DISTSCRAPE_* variables': after the
// rest, as the kind may come after them, from the environment, or from a
// default.
func (d *decoder) decodeDrivers(cfg *Config) {
	for i := range driverSections {
		ds := &driverSections[i]
		kind := *ds.kind(cfg)
		if kind == "" {
			kind = ds.defaultKind(cfg)
		}
		known := ds.keys()
		var sv reflect.Value
		if sec, ok := ds.new(kind); ok && sectionType(sec) != nil {
			ds.field(cfg).Set(reflect.ValueOf(sec))
			sv = reflect.ValueOf(sec).Elem()
		}
		for _, kv := range d.stash[ds.name] {
			k, val := kv[0], kv[1]
			full := join(ds.name, k.Value)
			if sv.IsValid() {
				if idx, ok := fieldsOf(sv.Type())[k.Value]; ok {
					d.p.lines[full] = k.Line
					d.value(val, sv.Field(idx), full, 1)
					continue
				}
			}
			if _, ok := known[k.Value]; ok {
				d.p.lines[full] = k.Line
				d.foreign(ds, kind, k.Value, known[k.Value].kinds, k.Line)
				continue
			}
			d.p.addAt(full, k.Line, "unknown key%s", ds.suggest(k.Value, known))
		}
		for _, key := range slices.Sorted(maps.Keys(known)) {
			full := join(ds.name, key)
			name := EnvVar(full)
			s, set := d.env(name)
			if !set {
				continue
			}
			delete(d.p.lines, full) // the file's line no longer explains the value
			idx, ok := -1, false
			if sv.IsValid() {
				idx, ok = fieldsOf(sv.Type())[key]
			}
			if !ok {
				d.foreign(ds, kind, key, known[key].kinds, 0)
				continue
			}
			if err := setScalar(sv.Field(idx), s); err != nil {
				d.p.addAt(full, 0, "from %s: %v", name, err)
			}
		}
	}
}

// foreign reports a key of another kind's driver.
func (d *decoder) foreign(ds *driverSection, kind, key string, kinds []string, line int) {
	full := join(ds.name, key)
	switch {
	case kind == "":
		d.p.addAt(full, line, "%s", ds.noKind)
	case !slices.Contains(ds.kinds(), kind):
		// The kind itself is wrong: Validate says so.
	default:
		d.p.addAt(full, line, "applies to %s.kind %s only, and %s.kind is %s: remove it (or set the kind it belongs to)",
			ds.name, orList(kinds), ds.name, kind)
	}
}

// suggest is suggest for a driver section: its own keys and every
// driver's.
func (ds *driverSection) suggest(key string, known map[string]driverKey) string {
	names := slices.Collect(maps.Keys(known))
	for name := range fieldsOf(reflect.TypeOf(Config{}).Field(fieldsOf(reflect.TypeOf(Config{}))[ds.name]).Type) {
		names = append(names, name)
	}
	return suggestAmong(key, names)
}

// applyDriverDefaults sets each driver section's kind (when none is named)
// and its section's defaults: the default tags of its zero fields, then
// its Defaulter.
func (c *Config) applyDriverDefaults() {
	for i := range driverSections {
		ds := &driverSections[i]
		setStr(ds.kind(c), ds.defaultKind(c))
		sv := ds.current(c)
		if !sv.IsValid() {
			continue
		}
		st := sv.Elem()
		for i := 0; i < st.NumField(); i++ {
			def, ok := st.Type().Field(i).Tag.Lookup("default")
			if ok && st.Field(i).IsZero() {
				_ = setScalar(st.Field(i), def) // TestDriverSections parses every default tag
			}
		}
		if df, ok := sv.Interface().(driver.Defaulter); ok {
			df.Defaults()
		}
	}
}

// checkDriverZeros is checkExplicitZeros for the drivers' keys: a number
// with a default tag written as 0.
func checkDriverZeros(cfg *Config, p *problems, env lookupFunc) {
	for i := range driverSections {
		ds := &driverSections[i]
		f := ds.field(cfg)
		if f.IsNil() {
			continue
		}
		st := f.Elem().Elem()
		for i := 0; i < st.NumField(); i++ {
			sf := st.Type().Field(i)
			def, ok := sf.Tag.Lookup("default")
			name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
			if !ok || !st.Field(i).IsZero() || st.Field(i).Kind() == reflect.String || st.Field(i).Kind() == reflect.Bool {
				continue
			}
			full := join(ds.name, name)
			if _, fromEnv := env(EnvVar(full)); p.lines[full] > 0 || fromEnv {
				p.add(full, "0 is not a valid setting; omit the key for the default (%s)", def)
			}
		}
	}
}

// validateDrivers checks each driver section's kind and its section.
func (c *Config) validateDrivers(p *problems) {
	for i := range driverSections {
		ds := &driverSections[i]
		kind := *ds.kind(c)
		if kind == "" {
			continue
		}
		if err := ds.regErr(); err != nil {
			p.add(ds.name+".kind", "%v", err)
		}
		if !oneOf(p, ds.name+".kind", kind, ds.kinds()...) || ds.field(c).IsNil() {
			continue
		}
		var dp driver.Problems
		ds.validate(c, &dp)
		p.take(ds.name, &dp)
	}
}

// driverPaths adds every driver key's path to out.
func driverPaths(out map[string]reflect.Type) {
	for i := range driverSections {
		ds := &driverSections[i]
		for key, k := range ds.keys() {
			out[join(ds.name, key)] = k.typ
		}
	}
}

// cloneDrivers gives r sections of its own.
func cloneDrivers(r *Config) {
	for i := range driverSections {
		f := driverSections[i].field(r)
		if f.IsNil() || sectionType(f.Interface()) == nil {
			continue
		}
		nv := reflect.New(f.Elem().Elem().Type())
		nv.Elem().Set(f.Elem().Elem())
		f.Set(nv)
	}
}

// redactDrivers hides the user information of the drivers' URL keys
// (redact:"url").
func redactDrivers(r *Config, red *redact.Redactor) {
	for i := range driverSections {
		f := driverSections[i].field(r)
		if f.IsNil() || sectionType(f.Interface()) == nil {
			continue
		}
		st := f.Elem().Elem()
		for i := 0; i < st.NumField(); i++ {
			if st.Type().Field(i).Tag.Get("redact") == "url" && st.Field(i).Kind() == reflect.String {
				st.Field(i).SetString(red.URL(st.Field(i).String()))
			}
		}
	}
}

// SetKey sets the key at path ("records.dir") to value as a DISTSCRAPE_*
// variable would, before ApplyDefaults: for a command's flags. A driver's
// key needs its section's kind set first.
func (c *Config) SetKey(path, value string) error {
	p := &problems{lines: map[string]int{}, seen: map[string]bool{}}
	section, key, _ := strings.Cut(path, ".")
	if ds := sectionNamed(section); ds != nil {
		if sv := ds.current(c); sv.IsValid() {
			if idx, ok := fieldsOf(sv.Elem().Type())[key]; ok {
				if err := setScalar(sv.Elem().Field(idx), value); err != nil {
					p.add(path, "%v", err)
				}
				return p.err()
			}
		}
	}
	if _, ok := staticPaths[path]; !ok {
		p.add(path, "unknown key")
		return p.err()
	}
	if err := setScalar(fieldByPath(reflect.ValueOf(c).Elem(), path), value); err != nil {
		p.add(path, "%v", err)
	}
	return p.err()
}

// Key returns the value of the key at path ("saver.path"), a driver's too;
// nil when the config has no such key (another kind's).
func (c *Config) Key(path string) any {
	section, key, _ := strings.Cut(path, ".")
	if ds := sectionNamed(section); ds != nil && !ds.field(c).IsNil() {
		st := ds.field(c).Elem().Elem()
		if idx, ok := fieldsOf(st.Type())[key]; ok {
			return st.Field(idx).Interface()
		}
	}
	if _, ok := staticPaths[path]; !ok {
		return nil
	}
	return fieldByPath(reflect.ValueOf(c).Elem(), path).Interface()
}
