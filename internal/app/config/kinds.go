package config

import (
	"maps"
	"slices"
	"strings"
)

// kindKeys says, for each section that has a kind, which of its keys apply
// to which kinds. A key set (in the file or a DISTSCRAPE_* variable) for a
// kind it does not apply to is refused: `path:` on a file saver would
// otherwise be accepted while the pages went to saver.dir. Keys not listed
// apply to every kind (or are checked where they are validated, like
// saver.keep_versions, saver.convert_links, tracker.partitions and
// scraper.sitemaps).
var kindKeys = []struct {
	section string
	kind    func(*Config) string
	keys    map[string][]string // key → the kinds it applies to
}{
	{"tracker", func(c *Config) string { return c.Tracker.Kind }, map[string][]string{
		"url":           {"redis"},
		"state":         {"memory"},
		"wait_replicas": {"redis"},
		"wait_timeout":  {"redis"},
	}},
	{"scraper", func(c *Config) string { return c.Scraper.Kind }, map[string][]string{
		"link_regex":       {"link"},
		"id_regex":         {"id"},
		"download_url_fmt": {"id"},
	}},
	{"saver", func(c *Config) string { return c.Saver.Kind }, map[string][]string{
		"dir":           {"file", "warc"},
		"layout":        {"file"},
		"name":          {"file"},
		"path":          {"tar"},
		"url":           {"redis"},
		"ttl":           {"redis"},
		"compress":      {"redis"},
		"key":           {"redis", "s3"},
		"bucket":        {"s3"},
		"region":        {"s3"},
		"endpoint":      {"s3"},
		"path_style":    {"s3"},
		"prefix":        {"s3"},
		"concurrency":   {"s3"},
		"max_size":      {"warc"},
		"warc_revisits": {"warc"},
		"cdx":           {"warc"},
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
