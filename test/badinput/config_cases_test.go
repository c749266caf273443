package badinput

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/distscrape/distscrape/test/testbin"
)

// good is a valid crawl; a config case breaks one field of it. Its seed
// is a closed port: a refused config must not even try it.
const good = "crawl: bad\nscraper: {kind: link, seeds: ['http://127.0.0.1:1/']}\nsaver: {kind: file, dir: out}\n"

// refusedConfig runs `crawl` on yaml: exit 2, the field named, nothing
// created (no output directory, no state).
func refusedConfig(name, yaml string, want ...string) hostile {
	return hostile{
		name: "config/" + name,
		run: func(b *bench) testbin.Result {
			return b.exec(time.Minute, "crawl", "-c", b.file("crawl.yaml", []byte(yaml)))
		},
		code:  2,
		want:  want,
		check: func(b *bench, _ testbin.Result) { b.unchanged() },
	}
}

func configCases() []hostile {
	return []hostile{
		refusedConfig("negative batch", good+"tracker: {batch: -1}\n", "tracker.batch"),
		refusedConfig("lease ttl too short", good+"tracker: {lease_ttl: 1ms}\n", "tracker.lease_ttl"),
		refusedConfig("negative attempts", good+"tracker: {max_attempts: -3}\n", "tracker.max_attempts"),
		refusedConfig("backoff not a duration", good+"tracker: {backoff: {base: soon}}\n", "tracker.backoff.base"),
		refusedConfig("negative timeout", good+"fetch: {timeout: -1s}\n", "fetch.timeout"),
		refusedConfig("negative rate", good+"fetch: {per_host_rate: -2}\n", "fetch.per_host_rate"),
		refusedConfig("unknown per-host scope", good+"fetch: {per_host_scope: ip}\n", "fetch.per_host_scope"),
		refusedConfig("proxy scope without proxies", good+"fetch: {per_host_scope: proxy}\n", "fetch.per_host_scope"),
		refusedConfig("host wait not a duration", good+"fetch: {max_host_wait: forever}\n", "fetch.max_host_wait"),
		refusedConfig("local address a name", good+"fetch: {local_address: eth0}\n", "fetch.local_address"),
		refusedConfig("exclude regex", "crawl: bad\nscraper: {kind: link, seeds: ['http://127.0.0.1:1/'], scope: {exclude_regex: '(?<x'}}\nsaver: {kind: file, dir: out}\n",
			"scraper.scope.exclude_regex"),
		refusedConfig("validate regex", "crawl: bad\nscraper: {kind: link, seeds: ['http://127.0.0.1:1/'], validate: {must_match: '[z-a]'}}\nsaver: {kind: file, dir: out}\n",
			"scraper.validate.must_match"),
		refusedConfig("saver layout", "crawl: bad\nscraper: {kind: link, seeds: ['http://127.0.0.1:1/']}\nsaver: {kind: file, dir: out, layout: tree}\n", "saver.layout"),
		refusedConfig("saver name placeholder", "crawl: bad\nscraper: {kind: link, seeds: ['http://127.0.0.1:1/']}\nsaver: {kind: file, dir: out, layout: flat, name: '{nope}'}\n", "saver.name"),
		refusedConfig("log level", good+"log: {level: loud}\n", "log.level"),
		// scraper.seeds follow the rule of `seed` and of discovered items.
		refusedConfig("seed URL with a space", "crawl: bad\nscraper: {kind: link, seeds: ['http://127.0.0.1:1/', 'http://127.0.0.1:1/a', 'http://127.0.0.1:1/a b']}\nsaver: {kind: file, dir: out}\n",
			"scraper.seeds[2]", "whitespace U+0020"),
		refusedConfig("seed ID with a zero-width space", "crawl: bad\nscraper: {kind: id, seeds: ['1', \"2\\u200b\"], id_regex: '(\\d+)', download_url_fmt: 'http://127.0.0.1:1/{id}'}\nsaver: {kind: file, dir: out}\n",
			"scraper.seeds[1]", "U+200B"),
		refusedConfig("duplicate key", good+"crawl: again\n", "crawl"),
		refusedConfig("NUL bytes", "crawl: bad\x00\x00\nscraper: {kind: link}\n", "crawl.yaml"),
		refusedConfig("binary garbage", string(bytes.Repeat([]byte{0xff, 0xfe, 0x00, 0x80}, 4096)), "crawl.yaml"),
		refusedConfig("list, not a mapping", "- crawl: bad\n- saver: {}\n", "crawl.yaml"),
		refusedConfig("huge document", good+fmt.Sprintf("fetch: {user_agent: %q}\n", strings.Repeat("y", 17<<20)), "larger than"),
		{
			name: "config/directory instead of a file",
			run:  func(b *bench) testbin.Result { return b.exec(time.Minute, "crawl", "-c", b.dir) },
			code: 2, want: []string{"directory"},
			check: func(b *bench, _ testbin.Result) { b.unchanged() },
		},
	}
}
