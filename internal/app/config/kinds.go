package config

import (
	"maps"
	"slices"
	"strings"
)

// kindKeys says, for the scraper, which of its keys apply to which kinds. A
// key set (in the file or a DISTSCRAPE_* variable) for a kind it does not
// apply to is refused. Keys not listed apply to every kind (or are checked
// where they are validated, like scraper.sitemaps). The sections of
// drivers (tracker, saver, records) know their kinds' keys from the
// drivers (decodeDrivers).
var kindKeys = []struct {
	section string
	kind    func(*Config) string
	keys    map[string][]string // key → the kinds it applies to
}{
	{"scraper", func(c *Config) string { return c.Scraper.Kind }, map[string][]string{
		"link_regex":       {"link"},
		"id_regex":         {"id"},
		"download_url_fmt": {"id"},
	}},
}

// checkKindKeys reports every key set for a kind it does not apply to. It
// runs after ApplyDefaults, so an omitted kind is its default.
func checkKindKeys(cfg *Config, p *problems, env lookupFunc) {
	for _, sec := range kindKeys {
		kind := sec.kind(cfg)
		for _, key := range slices.Sorted(maps.Keys(sec.keys)) {
			kinds := sec.keys[key]
			path := sec.section + "." + key
			_, fromEnv := env(EnvVar(path))
			if slices.Contains(kinds, kind) || p.lines[path] == 0 && !fromEnv {
				continue
			}
			p.add(path, "applies to %s.kind %s only, and this %s is %s: remove it (or set the kind it belongs to)",
				sec.section, orList(kinds), sec.section, kind)
		}
	}
}

// orList writes kinds as "file", "file or warc", "a, b or c".
func orList(kinds []string) string {
	if len(kinds) == 1 {
		return kinds[0]
	}
	return strings.Join(kinds[:len(kinds)-1], ", ") + " or " + kinds[len(kinds)-1]
}
