package config

import (
	"reflect"
	"slices"
	"sort"
	"strings"
)

// EnvPrefix starts every environment override. The variable for a key is the
// prefix plus its path in upper case with dots as underscores:
//
//	tracker.url              DISTSCRAPE_TRACKER_URL
//	tracker.backoff.base     DISTSCRAPE_TRACKER_BACKOFF_BASE
//	fetch.concurrency        DISTSCRAPE_FETCH_CONCURRENCY
//	saver.kind               DISTSCRAPE_SAVER_KIND
//
// Every scalar key has one (strings, numbers, booleans, durations, sizes);
// list keys (scraper.seeds, fetch.proxies, scraper.validate.status, ...) take
// a comma-separated list. fetch.headers has none. An override replaces the
// file's value and is not ${VAR}-expanded. Unrelated DISTSCRAPE_* variables
// (DISTSCRAPE_CONFIG) are ignored.
const EnvPrefix = "DISTSCRAPE_"

// EnvVar returns the environment variable that overrides a key path, e.g.
// EnvVar("fetch.concurrency") == "DISTSCRAPE_FETCH_CONCURRENCY".
func EnvVar(path string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer(".", "_").Replace(path))
}

// EnvVars lists every override variable with the key path it sets, sorted
// by variable name (for docs and `distscrape check`).
func EnvVars() [][2]string {
	var out [][2]string
	for p, t := range allPaths() {
		if overridable(t) {
			out = append(out, [2]string{EnvVar(p), p})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func overridable(t reflect.Type) bool {
	return isScalarType(t) || t.Kind() == reflect.Slice && isScalarType(t.Elem()) || t == proxyListType
}

// applyEnv sets every key whose DISTSCRAPE_* variable is set.
func applyEnv(cfg *Config, env lookupFunc, p *problems) {
	root := reflect.ValueOf(cfg).Elem()
	for _, pair := range EnvVars() {
		name, path := pair[0], pair[1]
		t, static := staticPaths[path]
		s, ok := env(name)
		if !ok || !static {
			continue // a driver's key: decodeDrivers sets it
		}
		v := fieldByPath(root, path)
		delete(p.lines, path) // the file's line no longer explains the value
		if t.Kind() == reflect.Slice {
			var parts []string
			if strings.TrimSpace(s) != "" {
				parts = strings.Split(s, ",")
			}
			sl := reflect.MakeSlice(t, len(parts), len(parts))
			var err error
			for i := 0; i < len(parts) && err == nil; i++ {
				item := sl.Index(i)
				if item.Type() == proxyType {
					item = item.Field(0) // a URL: a proxy of no country
				}
				err = setScalar(item, strings.TrimSpace(parts[i]))
			}
			if err != nil {
				p.addAt(path, 0, "from %s: %v", name, err)
				continue
			}
			v.Set(sl)
			continue
		}
		if err := setScalar(v, s); err != nil {
			p.addAt(path, 0, "from %s: %v", name, err)
		}
	}
}

func fieldByPath(v reflect.Value, path string) reflect.Value {
	for _, name := range strings.Split(path, ".") {
		v = v.Field(fieldsOf(v.Type())[name])
	}
	return v
}

// UnknownEnv lists the DISTSCRAPE_* variables in environ ("NAME=value", as
// os.Environ returns) that override no key, each with a did-you-mean when
// one is close, so the CLI can warn about a typo instead of silently
// ignoring it. Variables the CLI itself reads are passed in known.
func UnknownEnv(environ []string, known ...string) []string {
	vars := map[string]bool{}
	for _, kv := range EnvVars() {
		vars[kv[0]] = true
	}
	var out []string
	for _, e := range environ {
		name, _, _ := strings.Cut(e, "=")
		if !strings.HasPrefix(name, EnvPrefix) || vars[name] || slices.Contains(known, name) {
			continue
		}
		msg, best, bestD := name, "", 1<<30
		for v := range vars {
			if d := distance(name, v); d < bestD {
				best, bestD = v, d
			}
		}
		if bestD <= 2 {
			msg += " (did you mean " + best + "?)"
		}
		out = append(out, msg)
	}
	sort.Strings(out)
	return out
}
