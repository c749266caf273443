package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/distscrape/distscrape/driver"
)

var (
	durationType = reflect.TypeOf(time.Duration(0))
	sizeType     = reflect.TypeOf(Size(0))
)

// isScalarType reports whether a YAML scalar decodes into t.
func isScalarType(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		return true
	case reflect.Pointer:
		return isScalarType(t.Elem())
	}
	return false
}

func typeWord(t reflect.Type) string {
	switch {
	case t == durationType:
		return "a duration"
	case t == sizeType:
		return "a size"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return typeWord(t.Elem())
	}
	return t.String()
}

// quote shows a bad value, shortened so a huge value cannot flood the error.
func quote(s string) string { return driver.Quote(s) }

// setScalar parses s into v (a string, number, bool, duration, size or a
// pointer to one).
func setScalar(v reflect.Value, s string) error {
	switch v.Type() {
	case durationType:
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("invalid duration %s (use a Go duration like 30s, 5m or 1h30m)", quote(s))
		}
		v.SetInt(int64(d))
		return nil
	case sizeType:
		n, err := ParseSize(s)
		if err != nil {
			return err
		}
		v.SetInt(int64(n))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(s), "_", ""), 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("expected an integer, got %s", quote(s))
		}
		v.SetInt(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("expected a number, got %s", quote(s))
		}
		v.SetFloat(f)
	case reflect.Bool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "yes", "on":
			v.SetBool(true)
		case "false", "no", "off":
			v.SetBool(false)
		default:
			return fmt.Errorf("expected true or false, got %s", quote(s))
		}
	case reflect.Pointer:
		nv := reflect.New(v.Type().Elem())
		if err := setScalar(nv.Elem(), s); err != nil {
			return err
		}
		v.Set(nv)
	default:
		return fmt.Errorf("cannot set %s from a string", v.Type())
	}
	return nil
}

// expand replaces ${NAME} with the environment variable NAME and $$ with $.
// A lone $ (a regex anchor) stays as it is. An unset variable is an error:
// an empty password or URL would fail later, far from its cause.
func expand(s string, env lookupFunc) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ (write $$ for a literal $)")
			}
			name := s[i+2 : i+2+end]
			if !validEnvName(name) {
				return "", fmt.Errorf("invalid variable name %s in ${...} (letters, digits and _; write $$ for a literal $)", quote(name))
			}
			val, ok := env(name)
			if !ok {
				return "", fmt.Errorf("environment variable %s is not set (referenced as ${%s})", name, name)
			}
			b.WriteString(val)
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

var fieldCache sync.Map // reflect.Type -> map[string]int

// fieldsOf maps a struct's yaml key names to field indexes.
func fieldsOf(t reflect.Type) map[string]int {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]int)
	}
	m := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			m[name] = i
		}
	}
	fieldCache.Store(t, m)
	return m
}

// keyPaths lists every key path of Config ("tracker.lease_ttl", ...), for
// suggestions and environment overrides.
func keyPaths(t reflect.Type, prefix string, out map[string]reflect.Type) {
	for name, i := range fieldsOf(t) {
		ft := t.Field(i).Type
		p := join(prefix, name)
		out[p] = ft
		if ft.Kind() == reflect.Struct && ft != durationType {
			keyPaths(ft, p, out)
		}
	}
}

// staticPaths are the key paths of Config's own fields.
var staticPaths = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	keyPaths(reflect.TypeOf(Config{}), "", m)
	return m
}()

// allPaths are staticPaths and the keys of the drivers linked in (known
// once every package's init has run).
func allPaths() map[string]reflect.Type {
	m := maps.Clone(staticPaths)
	driverPaths(m)
	return m
}

// suggest says which key was probably meant: a close spelling at the same
// level, or the same name at another level.
func suggest(key, path string, t reflect.Type) string {
	return suggestAmong(key, slices.Collect(maps.Keys(fieldsOf(t))))
}

// suggestAmong is suggest with the names of the level.
func suggestAmong(key string, names []string) string {
	best, bestD := "", 1<<30
	for _, name := range names {
		if d := distance(strings.ToLower(key), name); d < bestD {
			best, bestD = name, d
		}
	}
	limit := 1
	if len(key) >= 5 {
		limit = 2
	}
	if bestD <= limit {
		return " (did you mean " + best + "?)"
	}
	var elsewhere []string
	for p := range allPaths() {
		if p == key || strings.HasSuffix(p, "."+key) {
			elsewhere = append(elsewhere, p)
		}
	}
	if len(elsewhere) > 0 {
		sort.Strings(elsewhere)
		return " (did you mean " + strings.Join(elsewhere, " or ") + "?)"
	}
	sort.Strings(names)
	return " (known keys here: " + strings.Join(names, ", ") + ")"
}

// distance is the optimal-string-alignment edit distance (a transposition
// counts as one edit: lease_tll -> lease_ttl).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 1 << 20
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
