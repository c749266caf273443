package config

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// kindOf are the kinds each section of kindKeys takes, and a config
// fragment that makes a section of that kind valid on its own.
var kindOf = map[string]map[string]string{
	"tracker": {"memory": "kind: memory", "redis": "kind: redis, url: 'redis://127.0.0.1:6379/0'"},
	"scraper": {"link": "kind: link, seeds: ['http://a.test/']", "id": "kind: id, download_url_fmt: 'http://a.test/{id}', id_regex: 'id=(\\d+)'"},
	"saver": {"file": "kind: file, dir: out", "tar": "kind: tar, path: out/x.tar", "redis": "kind: redis, url: 'redis://127.0.0.1:6379/1'",
		"s3": "kind: s3, bucket: b, region: r", "warc": "kind: warc, dir: out", "none": "kind: none"},
}

// kindValue is a value of the right type for a key of kindKeys.
var kindValue = map[string]string{
	"url": "'redis://127.0.0.1:6379/2'", "state": "s.state", "link_regex": "'href=\"([^\"]+)\"'", "id_regex": "'id=(\\d+)'",
	"download_url_fmt": "'http://a.test/{id}'", "dir": "out2", "layout": "flat", "name": "'{id}'", "convert_links": "false",
	"path": "out/p.tar", "ttl": "1h", "compress": "true", "key": "'{crawl}/{id}'", "bucket": "b2", "region": "r2",
	"endpoint": "'http://127.0.0.1:9'", "path_style": "true", "prefix": "p/", "concurrency": "4", "max_size": "1MiB",
	"warc_revisits": "true", "cdx": "true", "wait_replicas": "0", "wait_timeout": "2s",
}

// TestKeysOfAnotherKind: every key of a section with a kind, set for each
// kind it does not apply to, from the file and from a DISTSCRAPE_*
// variable, is refused at its line naming the kinds it applies to; set for
// a kind it applies to, it is accepted.
func TestKeysOfAnotherKind(t *testing.T) {
	t.Parallel()
	for _, sec := range kindKeys {
		for key, kinds := range sec.keys {
			for kind, frag := range kindOf[sec.section] {
				val, ok := kindValue[key]
				if !ok {
					t.Fatalf("no test value for %s.%s", sec.section, key)
				}
				path := sec.section + "." + key
				doc := func(section string) string {
					lines := []string{"crawl: x"}
					for _, s := range []string{"tracker", "scraper", "saver"} {
						f := map[string]string{"tracker": "kind: memory", "scraper": kindOf["scraper"]["link"], "saver": "kind: none"}[s]
						if s == sec.section {
							f = section
						}
						lines = append(lines, s+": {"+f+"}")
					}
					return strings.Join(lines, "\n") + "\n"
				}
				applies := slices.Contains(kinds, kind)
				t.Run(fmt.Sprintf("%s/%s/file", path, kind), func(t *testing.T) {
					src := doc(frag + ", " + key + ": " + val)
					if strings.Contains(frag, key+":") { // the fragment sets it already
						src = doc(frag)
					}
					_, err := parse([]byte(src), "c.yaml", envOf(nil))
					checkKindErr(t, err, path, kinds, applies)
				})
				if strings.Contains(frag, key+":") {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/env", path, kind), func(t *testing.T) {
					_, err := parse([]byte(doc(frag)), "c.yaml", envOf(map[string]string{EnvVar(path): strings.Trim(val, "'")}))
					checkKindErr(t, err, path, kinds, applies)
				})
			}
		}
	}
}

func checkKindErr(t *testing.T, err error, path string, kinds []string, applies bool) {
	t.Helper()
	var found bool
	for _, fe := range fieldErrors(err) {
		if fe.Path == path && strings.Contains(fe.Msg, "applies to") {
			found = true
			if !strings.Contains(fe.Msg, orList(kinds)) {
				t.Errorf("%s: %q does not name the kinds %v", path, fe.Msg, kinds)
			}
		}
	}
	if found == applies {
		t.Errorf("%s: refused=%v, want %v: %v", path, found, !applies, err)
	}
}
