package config

import (
	"errors"
	"strings"
	"testing"
)

// TestBadConfigs: every bad config is rejected with ErrInvalid and a message
// naming the key path and what is wrong.
func TestBadConfigs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		path, msg  string // expected in one *FieldError
	}{
		{"unknown key with suggestion", "crawl: x\ntracker:\n  lease_tll: 5m\n", "tracker.lease_tll", "unknown key (did you mean lease_ttl?)"},
		{"key at the wrong level", "crawl: x\nlease_ttl: 5m\n", "lease_ttl", "did you mean tracker.lease_ttl?"},
		{"unknown key listing", "crawl: x\nfetch:\n  zzzz: 1\n", "fetch.zzzz", "known keys here: allow_metadata, concurrency"},
		{"duplicate key", "crawl: x\ncrawl: y\n", "crawl", "duplicate key"},
		{"missing crawl", "scraper: {seeds: ['https://a.org/']}\n", "crawl", "required"},
		{"bad crawl name", "crawl: 'a b/c'\n", "crawl", "use 1 to 64 letters"},
		{"tracker kind", "crawl: x\ntracker: {kind: postgres}\n", "tracker.kind", `unknown value "postgres" (want memory or redis)`},
		{"partitions on memory", "crawl: x\ntracker: {partitions: 4}\n", "tracker.partitions", "the memory tracker has no partitions"},
		{"partitions too many", "crawl: x\ntracker: {kind: redis, url: 'redis://h:6379', partitions: 2000}\n", "tracker.partitions", "2000"},
		{"redis without url", "crawl: x\ntracker: {kind: redis}\n", "tracker.url", "required when tracker.kind is redis"},
		{"redis url scheme", "crawl: x\ntracker: {kind: redis, url: 'http://h:6379'}\n", "tracker.url", `scheme "http" not allowed (want redis:// or rediss://)`},
		{"redis url db", "crawl: x\ntracker: {kind: redis, url: 'redis://h:6379/x'}\n", "tracker.url", `database "x" is not a number`},
		{"cluster url db", "crawl: x\ntracker: {kind: redis, url: 'redis://h:7000/1?addr=h2:7001'}\n", "tracker.url", "has only database 0"},
		{"cluster addr without port", "crawl: x\ntracker: {kind: redis, url: 'redis://h:7000?addr=h2'}\n", "tracker.url", `addr="h2": want host:port`},
		{"cluster addr empty", "crawl: x\ntracker: {kind: redis, url: 'redis://h:7000?addr='}\n", "tracker.url", `addr="": want host:port`},
		{"cluster addr without host", "crawl: x\ntracker: {kind: redis, url: 'redis://h:7000?addr=:7001'}\n", "tracker.url", `addr=":7001": want host:port`},
		{"cluster addr bad port", "crawl: x\ntracker: {kind: redis, url: 'redis://h:7000?addr=h2:99999'}\n", "tracker.url", `addr="h2:99999": want host:port`},
		{"cluster addr a URL", "crawl: x\ntracker: {kind: redis, url: 'redis://h:7000?addr=redis://h2:7001'}\n", "tracker.url", `addr="redis://h2:7001": want host:port`},
		{"unset variable", "crawl: x\ntracker: {kind: redis, url: 'redis://:${NOPE}@h'}\n", "tracker.url", "environment variable NOPE is not set"},
		{"unterminated variable", "crawl: x\nmetrics: {addr: '${HOST'}\n", "metrics.addr", "unterminated ${"},
		{"bad duration", "crawl: x\ntracker: {lease_ttl: 30}\n", "tracker.lease_ttl", `invalid duration "30"`},
		{"lease ttl range", "crawl: x\ntracker: {lease_ttl: 1ms}\n", "tracker.lease_ttl", "1ms is out of range (100ms to 24h0m0s)"},
		{"heartbeat not a duration", "crawl: x\ntracker: {heartbeat: 2}\n", "tracker.heartbeat", `invalid duration "2"`},
		{"heartbeat a word", "crawl: x\ntracker: {heartbeat: often}\n", "tracker.heartbeat", `invalid duration "often"`},
		{"heartbeat too short", "crawl: x\ntracker: {heartbeat: 1ms}\n", "tracker.heartbeat", "1ms is out of range (10ms to 1m0s)"},
		{"heartbeat negative", "crawl: x\ntracker: {heartbeat: -2s}\n", "tracker.heartbeat", "-2s is out of range (10ms to 1m0s)"},
		{"heartbeat too long", "crawl: x\ntracker: {heartbeat: 2m}\n", "tracker.heartbeat", "2m0s is out of range (10ms to 1m0s)"},
		{"heartbeat misses one", "crawl: x\ntracker: {heartbeat_misses: 1}\n", "tracker.heartbeat_misses", "1 is out of range (2 to 100)"},
		{"heartbeat misses negative", "crawl: x\ntracker: {heartbeat_misses: -3}\n", "tracker.heartbeat_misses", "-3 is out of range (2 to 100)"},
		{"heartbeat misses too many", "crawl: x\ntracker: {heartbeat_misses: 101}\n", "tracker.heartbeat_misses", "101 is out of range (2 to 100)"},
		{"heartbeat misses a word", "crawl: x\ntracker: {heartbeat_misses: three}\n", "tracker.heartbeat_misses", `expected an integer, got "three"`},
		{"heartbeat misses a duration", "crawl: x\ntracker: {heartbeat_misses: 3s}\n", "tracker.heartbeat_misses", `expected an integer, got "3s"`},
		{"heartbeat misspelt", "crawl: x\ntracker: {heart_beat: 2s}\n", "tracker.heart_beat", "unknown key (did you mean heartbeat?)"},
		{"negative batch", "crawl: x\ntracker: {batch: -1}\n", "tracker.batch", "-1 is out of range (1 to 10000)"},
		{"not an integer", "crawl: x\ntracker: {max_attempts: many}\n", "tracker.max_attempts", `expected an integer, got "many"`},
		{"backoff order", "crawl: x\ntracker: {backoff: {base: 1h, max: 1m}}\n", "tracker.backoff.max", "less than backoff.base"},
		{"scraper kind", "crawl: x\nscraper: {kind: sitemap}\n", "scraper.kind", `unknown value "sitemap" (want link or id)`},
		{"links unknown", "crawl: x\nscraper: {seeds: [\"http://a.org/\"], links: regexp}\n", "scraper.links", `"regexp" is not parse`},
		{"convert_links flat", "crawl: x\nsaver: {layout: flat, convert_links: true}\n", "saver.convert_links", "needs saver.layout mirror"},
		{"wacz file", "crawl: x\nsaver: {wacz: true}\n", "saver.wacz", "applies to saver.kind warc only, and saver.kind is file"},
		{"wacz tar", "crawl: x\nsaver: {kind: tar, wacz: true}\n", "saver.wacz", "applies to saver.kind warc only, and saver.kind is tar"},
		{"convert_links tar", "crawl: x\nsaver: {kind: tar, convert_links: true}\n", "saver.convert_links", "applies to saver.kind file only, and saver.kind is tar"},
		{"convert_links id", "crawl: x\nscraper: {kind: id, id_regex: '\\d+', download_url_fmt: 'https://a.org/{id}'}\nsaver: {convert_links: true}\n", "saver.convert_links", "needs scraper.kind link"},
		{"sitemaps id", "crawl: x\nscraper: {kind: id, id_regex: '\\d+', download_url_fmt: 'https://a.org/{id}', sitemaps: true}\n", "scraper.sitemaps", "needs scraper.kind link"},
		{"requisites not a bool", "crawl: x\nscraper: {requisites: maybe}\n", "scraper.requisites", "maybe"},
		{"link regex", "crawl: x\nscraper: {link_regex: 'href=\"([^\"]+\"'}\n", "scraper.link_regex", "missing closing )"},
		{"exclude regex", "crawl: x\nscraper: {scope: {exclude_regex: '[a-'}}\n", "scraper.scope.exclude_regex", "unterminated [] set"},
		{"seed not http", "crawl: x\nscraper: {seeds: ['ftp://a.org/']}\n", "scraper.seeds[0]", `scheme "ftp" not allowed`},
		{"seed relative", "crawl: x\nscraper: {seeds: ['https://a.org/', 'a.org/x']}\n", "scraper.seeds[1]", "not an absolute URL"},
		{"seed no host", "crawl: x\nscraper: {seeds: ['http:///x']}\n", "scraper.seeds[0]", "URL has no host"},
		{"id without regex", "crawl: x\nscraper: {kind: id, download_url_fmt: 'https://a.org/{id}'}\n", "scraper.id_regex", "required when scraper.kind is id"},
		{"id without url", "crawl: x\nscraper: {kind: id, id_regex: '\\d+'}\n", "scraper.download_url_fmt", "required when scraper.kind is id"},
		{"id url without {id}", "crawl: x\nscraper: {kind: id, id_regex: '\\d+', download_url_fmt: 'https://a.org/item'}\n", "scraper.download_url_fmt", "must contain {id}"},
		{"id seed with space", "crawl: x\nscraper: {kind: id, id_regex: '\\d+', download_url_fmt: 'https://a.org/{id}', seeds: ['1 2']}\n", "scraper.seeds[0]", "whitespace"},
		{"scope host is a URL", "crawl: x\nscraper: {scope: {hosts: ['https://a.org/']}}\n", "scraper.scope.hosts[0]", "is not a host name"},
		{"status code", "crawl: x\nscraper: {validate: {status: [200, 99]}}\n", "scraper.validate.status[1]", "99 is out of range (100 to 599)"},
		{"must_not_match regex", "crawl: x\nscraper: {validate: {must_not_match: '(?<x'}}\n", "scraper.validate.must_not_match", "unrecognized grouping construct: (?<"},
		{"content type", "crawl: x\nscraper: {content_types: [html]}\n", "scraper.content_types[0]", "is not a media type"},
		{"revisit without match", "crawl: x\nscraper: {revisit: [{every: 1h}]}\n", "scraper.revisit[0].match", "required"},
		{"revisit bad match", "crawl: x\nscraper: {revisit: [{match: '(', every: 1h}]}\n", "scraper.revisit[0].match", "missing closing )"},
		{"revisit without every", "crawl: x\nscraper: {revisit: [{match: x}]}\n", "scraper.revisit[0].every", "required"},
		{"revisit every too short", "crawl: x\nscraper: {revisit: [{match: x, every: 1h}, {match: y, every: 10ms}]}\n", "scraper.revisit[1].every", "10ms is out of range (1s to 8760h0m0s)"},
		{"revisit every negative", "crawl: x\nscraper: {revisit: [{match: x, every: -1h}]}\n", "scraper.revisit[0].every", "out of range"},
		{"revisit every not a duration", "crawl: x\nscraper: {revisit: [{match: x, every: 3600}]}\n", "scraper.revisit[0].every", `invalid duration "3600"`},
		{"revisit misspelt key", "crawl: x\nscraper: {revisit: [{match: x, evry: 1h}]}\n", "scraper.revisit[0].evry", "did you mean every?"},
		{"revisit not a list", "crawl: x\nscraper: {revisit: {match: x, every: 1h}}\n", "scraper.revisit", "expected a list, got a mapping"},
		{"labels without labels", "crawl: x\nscraper: {labels: [{match: x}]}\n", "scraper.labels[0].labels", "required"},
		{"labels without match", "crawl: x\nscraper: {labels: [{labels: [a]}]}\n", "scraper.labels[0].match", "required"},
		{"labels bad match", "crawl: x\nscraper: {labels: [{match: '[a', labels: [a]}]}\n", "scraper.labels[0].match", "unterminated [] set"},
		{"label with a space", "crawl: x\nscraper: {labels: [{match: x, labels: [ok, 'a b']}]}\n", "scraper.labels[0].labels[1]", `label "a b": " " at byte 1`},
		{"label with a comma", "crawl: x\nscraper: {labels: [{match: x, labels: ['a,b']}]}\n", "scraper.labels[0].labels[0]", `","`},
		{"label empty", "crawl: x\nscraper: {labels: [{match: x, labels: ['']}]}\n", "scraper.labels[0].labels[0]", "empty label"},
		{"label twice", "crawl: x\nscraper: {labels: [{match: x, labels: [a, a]}]}\n", "scraper.labels[0].labels[1]", "given twice"},
		{"labels a string", "crawl: x\nscraper: {labels: [{match: x, labels: a}]}\n", "scraper.labels[0].labels", "expected a list, got a scalar"},
		{"labels too many", "crawl: x\nscraper: {labels: [{match: x, labels: [a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q]}]}\n", "scraper.labels[0].labels", "17 labels, more than the limit of 16"},
		{"label inherit not a bool", "crawl: x\nscraper: {labels: [{match: x, labels: [a], inherit: yes please}]}\n", "scraper.labels[0].inherit", "expected true or false"},
		{"priority without match", "crawl: x\nscraper: {priority: [{priority: 3}]}\n", "scraper.priority[0].match", "required"},
		{"priority too high", "crawl: x\nscraper: {priority: [{match: x, priority: 10}]}\n", "scraper.priority[0].priority", "10 is out of range (0 to 9)"},
		{"priority negative", "crawl: x\nscraper: {priority: [{match: x, priority: -1}]}\n", "scraper.priority[0].priority", "-1 is out of range (0 to 9)"},
		{"priority not an integer", "crawl: x\nscraper: {priority: [{match: x, priority: high}]}\n", "scraper.priority[0].priority", `expected an integer, got "high"`},
		{"breadth_first not a bool", "crawl: x\nscraper: {breadth_first: 1}\n", "scraper.breadth_first", "expected true or false"},
		{"seeds not a list", "crawl: x\nscraper: {seeds: 'https://a.org/'}\n", "scraper.seeds", "expected a list, got a scalar"},
		{"tracker not a mapping", "crawl: x\ntracker: redis\n", "tracker", "expected a mapping"},
		{"string given a list", "crawl: [a, b]\n", "crawl", "expected a string, got a list"},
		{"concurrency range", "crawl: x\nfetch: {concurrency: 100000}\n", "fetch.concurrency", "out of range (1 to 10000)"},
		{"negative rate", "crawl: x\nfetch: {per_host_rate: -2}\n", "fetch.per_host_rate", "≥ 0"},
		{"step unknown word", "crawl: x\nextract: [{name: r, match: x, fields: {a: {css: p, process: [tally]}}}]\n", "extract[0].fields.a.process[0]", `"tally" is not a step`},
		{"step two keys", "crawl: x\nextract: [{name: r, match: x, fields: {a: {css: p, process: [{lower: true, split: ','}]}}}]\n", "extract[0].fields.a.process[0]", "one per step"},
		{"step empty", "crawl: x\nextract: [{name: r, match: x, fields: {a: {css: p, process: [{}]}}}]\n", "extract[0].fields.a.process[0]", "empty"},
		{"step unknown key", "crawl: x\nextract: [{name: r, match: x, fields: {a: {css: p, process: [{strip: true}]}}}]\n", "extract[0].fields.a.process[0].strip", "unknown key"},
		{"step split without all", "crawl: x\nextract: [{name: r, match: x, fields: {a: {css: p, process: [{split: ','}, lower]}}}]\n", "extract[0].fields.a.process", "split leaves several values"},
		{"step count not int", "crawl: x\nextract: [{name: r, match: x, fields: {a: {css: p, process: [count]}}}]\n", "extract[0].fields.a.process[0]", "want int"},
		{"step decimal on string", "crawl: x\nextract: [{name: r, match: x, fields: {a: {css: p, process: [{decimal: ','}]}}}]\n", "extract[0].fields.a.process[0]", "numbers only"},
		{"step decimal bad", "crawl: x\nextract: [{name: r, match: x, fields: {a: {css: p, type: float, process: [{decimal: ' '}]}}}]\n", "extract[0].fields.a.process[0]", "want"},
		{"step replace bad regex", "crawl: x\nextract: [{name: r, match: x, fields: {a: {css: p, process: [{replace: {regex: '[', with: ''}}]}}}]\n", "extract[0].fields.a.process[0]", "invalid regex"},
		{"step replace no regex", "crawl: x\nextract: [{name: r, match: x, fields: {a: {css: p, process: [{replace: {with: x}}]}}}]\n", "extract[0].fields.a.process[0]", "regex is empty"},
		{"process not a list", "crawl: x\nextract: [{name: r, match: x, fields: {a: {css: p, process: lower}}}]\n", "extract[0].fields.a.process", "expected a list"},
		{"keep_spaces on int", "crawl: x\nextract: [{name: r, match: x, fields: {a: {css: p, type: int, keep_spaces: true}}}]\n", "extract[0].fields.a.keep_spaces", "strings only"},
		{"scope unknown", "crawl: x\nfetch: {per_host_scope: host}\n", "fetch.per_host_scope", `"host" is not fleet, worker or proxy`},
		{"scope wrong case", "crawl: x\nfetch: {per_host_scope: Worker}\n", "fetch.per_host_scope", `"Worker" is not fleet, worker or proxy`},
		{"scope ip", "crawl: x\nfetch: {per_host_scope: ip}\n", "fetch.per_host_scope", "is not fleet, worker or proxy"},
		{"scope not a string", "crawl: x\nfetch: {per_host_scope: [worker]}\n", "fetch.per_host_scope", "expected a string, got a list"},
		{"scope proxy without proxies", "crawl: x\nfetch: {per_host_scope: proxy}\n", "fetch.per_host_scope", "needs fetch.proxies"},
		{"max_host_wait negative", "crawl: x\nfetch: {max_host_wait: -1s}\n", "fetch.max_host_wait", "out of range"},
		{"max_host_wait too long", "crawl: x\nfetch: {max_host_wait: 2h}\n", "fetch.max_host_wait", "out of range"},
		{"max_host_wait not a duration", "crawl: x\nfetch: {max_host_wait: soon}\n", "fetch.max_host_wait", ""},
		{"local_address a name", "crawl: x\nfetch: {local_address: localhost}\n", "fetch.local_address", "is not an IP address"},
		{"local_address with port", "crawl: x\nfetch: {local_address: '127.0.0.2:80'}\n", "fetch.local_address", "is not an IP address"},
		{"local_address cidr", "crawl: x\nfetch: {local_address: 10.0.0.0/8}\n", "fetch.local_address", "is not an IP address"},
		{"bad size unit", "crawl: x\nfetch: {max_body: 64 MiBs}\n", "fetch.max_body", `unknown unit "MiBs"`},
		{"bad bool", "crawl: x\nfetch: {robots: maybe}\n", "fetch.robots", `expected true or false, got "maybe"`},
		{"proxy scheme", "crawl: x\nfetch: {proxies: ['ftp://p:21']}\n", "fetch.proxies[0]", "want http://, https://, socks5:// or socks5h://"},
		{"header name", "crawl: x\nfetch: {headers: {'Bad Header': v}}\n", "fetch.headers.Bad Header", "not a valid header name"},
		{"header value newline", "crawl: x\nfetch: {headers: {X-A: \"a\\r\\nInjected: 1\"}}\n", "fetch.headers.X-A", "line break"},
		{"saver kind", "crawl: x\nsaver: {kind: ftp}\n", "saver.kind", `unknown value "ftp" (want file, none, redis, s3, tar or warc)`},
		{"warc max_size small", "crawl: x\nsaver: {kind: warc, max_size: 64KiB}\n", "saver.max_size", "64KiB is out of range (1MiB to 1TiB)"},
		{"warc max_size huge", "crawl: x\nsaver: {kind: warc, max_size: 2TiB}\n", "saver.max_size", "2TiB is out of range (1MiB to 1TiB)"},
		{"max_pages negative", "crawl: x\nlimits: {max_pages: -1}\n", "limits.max_pages", "-1: want 0 (unlimited) or a number of pages"},
		{"max_pages not an integer", "crawl: x\nlimits: {max_pages: 1e3}\n", "limits.max_pages", `expected an integer, got "1e3"`},
		{"max_pages a size", "crawl: x\nlimits: {max_pages: 10k}\n", "limits.max_pages", `expected an integer, got "10k"`},
		{"max_pages too large", "crawl: x\nlimits: {max_pages: 99999999999999999999}\n", "limits.max_pages", "expected an integer"},
		{"max_bytes negative", "crawl: x\nlimits: {max_bytes: -1}\n", "limits.max_bytes", `invalid size "-1"`},
		{"max_bytes bad unit", "crawl: x\nlimits: {max_bytes: 64 MiBs}\n", "limits.max_bytes", `unknown unit "MiBs"`},
		{"max_bytes too large", "crawl: x\nlimits: {max_bytes: 99999999TiB}\n", "limits.max_bytes", "too large"},
		{"limits misspelt", "crawl: x\nlimits: {max_page: 10}\n", "limits.max_page", "did you mean max_pages?"},
		{"limits at the top", "crawl: x\nmax_pages: 10\n", "max_pages", "did you mean limits.max_pages?"},
		{"limits not a mapping", "crawl: x\nlimits: 100\n", "limits", "expected a mapping"},
		{"warc max_size negative", "crawl: x\nsaver: {kind: warc, max_size: -1}\n", "saver.max_size", ""},
		{"warc max_size unit", "crawl: x\nsaver: {kind: warc, max_size: 1 GiBs}\n", "saver.max_size", `unknown unit "GiBs"`},
		{"warc dir empty", "crawl: x\nsaver: {kind: warc, dir: ' '}\n", "saver.dir", ""},
		{"file layout", "crawl: x\nsaver: {layout: tree}\n", "saver.layout", "want mirror or flat"},
		{"keep_versions negative", "crawl: x\nsaver: {keep_versions: -1}\n", "saver.keep_versions", "-1 is out of range (1 to 1000)"},
		{"keep_versions huge", "crawl: x\nsaver: {kind: s3, bucket: b12, keep_versions: 1001}\n", "saver.keep_versions", "1001 is out of range (1 to 1000)"},
		{"keep_versions not an integer", "crawl: x\nsaver: {keep_versions: all}\n", "saver.keep_versions", "expected an integer"},
		{"keep_versions tar", "crawl: x\nsaver: {kind: tar, keep_versions: 2}\n", "saver.keep_versions", "a tar saver keeps every version"},
		{"keep_versions warc", "crawl: x\nsaver: {kind: warc, keep_versions: 2}\n", "saver.keep_versions", "a warc saver keeps every version"},
		{"keep_versions redis", "crawl: x\nsaver: {kind: redis, url: 'redis://h', keep_versions: 1001}\n", "saver.keep_versions", "1001 is out of range (1 to 1000)"},
		{"keep_versions none", "crawl: x\nsaver: {kind: none, keep_versions: 2}\n", "saver.keep_versions", "keeps nothing"},
		{"flat name not unique", "crawl: x\nsaver: {layout: flat, name: '{crawl}.html'}\n", "saver.name", "must contain {id}, {sha256} or {path}"},
		{"template placeholder", "crawl: x\nsaver: {layout: flat, name: '{idd}'}\n", "saver.name", "unknown placeholder {idd}"},
		{"template brace", "crawl: x\nsaver: {kind: tar, path: 'out/{crawl.tar'}\n", "saver.path", "unclosed { at byte"},
		{"template unclosed", "crawl: x\nsaver: {kind: redis, url: 'redis://h', key: 'p:{id'}\n", "saver.key", "unclosed { at byte"},
		{"template stray brace", "crawl: x\nsaver: {kind: s3, bucket: b12, key: 'a}{id}'}\n", "saver.key", "unmatched }"},
		{"tar extension", "crawl: x\nsaver: {kind: tar, path: 'out/a.zip'}\n", "saver.path", "must end in .tar, .tar.gz, .tar.bz2 or .tar.zst"},
		{"redis saver url", "crawl: x\nsaver: {kind: redis}\n", "saver.url", "required when saver.kind is redis"},
		{"s3 bucket", "crawl: x\nsaver: {kind: s3}\n", "saver.bucket", "required when saver.kind is s3"},
		{"s3 bucket name", "crawl: x\nsaver: {kind: s3, bucket: My_Bucket}\n", "saver.bucket", "not a valid bucket name"},
		{"s3 endpoint", "crawl: x\nsaver: {kind: s3, bucket: b12, endpoint: '127.0.0.1:7070'}\n", "saver.endpoint", "not an absolute URL (want http:// or https://)"},
		{"log level", "crawl: x\nlog: {level: verbose}\n", "log.level", "want debug, info, warn or error"},
		{"metrics addr", "crawl: x\nmetrics: {addr: localhost}\n", "metrics.addr", "is not host:port"},
		{"metrics addr port", "crawl: x\nmetrics: {addr: 'localhost:http'}\n", "metrics.addr", "is not a number"},
		{"metrics addr port too big", "crawl: x\nmetrics: {addr: 'localhost:65536'}\n", "metrics.addr", "is not a number"},
		{"metrics addr range reversed", "crawl: x\nmetrics: {addr: '127.0.0.1:9120-9108'}\n", "metrics.addr", "below the first"},
		{"metrics addr range of port 0", "crawl: x\nmetrics: {addr: '127.0.0.1:0-10'}\n", "metrics.addr", "port 0"},
		{"metrics addr range too wide", "crawl: x\nmetrics: {addr: '127.0.0.1:9000-9999'}\n", "metrics.addr", "at most 256"},
		{"metrics addr range half", "crawl: x\nmetrics: {addr: '127.0.0.1:9108-'}\n", "metrics.addr", "is not a number"},
		{"metrics addr range signs", "crawl: x\nmetrics: {addr: '127.0.0.1:+9108-9110'}\n", "metrics.addr", "is not a number"},
		{"metrics addr range three", "crawl: x\nmetrics: {addr: '127.0.0.1:9108-9110-9112'}\n", "metrics.addr", "is not a number"},
		// dashboard.token: every way a token is too weak or cannot travel in a header and a cookie.
		{"dashboard token short", "crawl: x\ndashboard: {token: abc}\n", "dashboard.token", "3 bytes: want at least 16"},
		{"dashboard token long", "crawl: x\ndashboard: {token: '" + strings.Repeat("a", 257) + "'}\n", "dashboard.token", "want at most 256"},
		{"dashboard token space", "crawl: x\ndashboard: {token: 'abcdefgh ijklmnopq'}\n", "dashboard.token", "space, control or non-ASCII"},
		{"dashboard token control", "crawl: x\ndashboard: {token: \"abcdefgh\\tijklmnopq\"}\n", "dashboard.token", "space, control or non-ASCII"},
		{"dashboard token non-ascii", "crawl: x\ndashboard: {token: 'abcdefghijklmnopé'}\n", "dashboard.token", "space, control or non-ASCII"},
		{"dashboard token cookie separator", "crawl: x\ndashboard: {token: 'abcdefgh;ijklmnopq'}\n", "dashboard.token", "cannot travel in a cookie"},
		{"dashboard token quote", "crawl: x\ndashboard: {token: 'abcdefgh\"ijklmnopq'}\n", "dashboard.token", "cannot travel in a cookie"},
		{"yaml syntax", "crawl: x\ntracker: {kind: redis\n", "", "test.yaml:"},
		{"empty file", "", "", "empty config"},
		{"not a mapping", "- crawl: x\n", "", "test.yaml:1: expected a mapping of keys"},
		{"two documents", "crawl: x\n---\ncrawl: y\n", "", "more than one YAML document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := parse([]byte(tt.yaml), "test.yaml", envOf(testEnv))
			if err == nil {
				t.Fatalf("accepted: %+v", cfg)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			for _, fe := range fieldErrors(err) {
				if fe.Path == tt.path && strings.Contains(fe.Error(), tt.msg) {
					if tt.path != "" && !strings.HasPrefix(fe.Error(), tt.path+": ") {
						t.Errorf("message does not start with the path: %v", fe)
					}
					return
				}
			}
			t.Errorf("want %s: ...%s...; got:\n%v", tt.path, tt.msg, err)
		})
	}
}

// fieldErrors flattens a joined error into its FieldErrors.
func fieldErrors(err error) []*FieldError {
	var out []*FieldError
	var fe *FieldError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, fieldErrors(e)...)
		}
	} else if errors.As(err, &fe) {
		out = append(out, fe)
	}
	return out
}

// TestAllProblemsAtOnce: one run reports every problem, each on its line.
func TestAllProblemsAtOnce(t *testing.T) {
	t.Parallel()
	src := "crawl: x\ntracker:\n  kind: nope\n  batch: 0\n  lease_tll: 1s\nfetch:\n  concurrency: -3\nscraper: {seeds: ['http://a.org/']}\n"
	_, err := parse([]byte(src), "c.yaml", envOf(nil))
	got := map[string]string{}
	for _, fe := range fieldErrors(err) {
		got[fe.Path] = fe.Pos
	}
	want := map[string]string{"tracker.kind": "c.yaml:3", "tracker.batch": "c.yaml:4", "tracker.lease_tll": "c.yaml:5", "fetch.concurrency": "c.yaml:7"}
	for path, pos := range want {
		if got[path] != pos {
			t.Errorf("%s: position %q, want %q (all: %v)", path, got[path], pos, err)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d problems, want %d: %v", len(got), len(want), err)
	}
}

// TestScopeRequired: a link crawl's scope is never every host by accident.
func TestScopeRequired(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, scraper string
		ok            bool
	}{
		{"link without seeds", "{kind: link}", false},
		{"link without seeds, empty lists", "{kind: link, seeds: [], scope: {hosts: [], prefixes: []}}", false},
		{"link with seeds", "{kind: link, seeds: ['http://a.org/']}", true},
		{"link with hosts", "{kind: link, scope: {hosts: [a.org]}}", true},
		{"link with prefixes", "{kind: link, scope: {prefixes: ['http://a.org/docs/']}}", true},
		{"id without seeds", "{kind: id, id_regex: '(\\d+)', download_url_fmt: 'http://a.org/{id}'}", true},
	} {
		_, err := parse([]byte("crawl: x\nscraper: "+c.scraper+"\n"), "c.yaml", envOf(nil))
		if c.ok != (err == nil) {
			t.Errorf("%s: %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "scraper.scope.hosts: a link crawl without scraper.seeds")) {
			t.Errorf("%s: %v does not name scraper.scope.hosts", c.name, err)
		}
	}
}

// TestValidateConstructed: Validate works on a Config built in code.
func TestValidateConstructed(t *testing.T) {
	t.Parallel()
	c := &Config{Crawl: "x", Scraper: Scraper{Seeds: []string{"http://a.org/"}}}
	c.ApplyDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults alone are invalid: %v", err)
	}
	c.Fetch.Concurrency = 0
	c.Scraper.LinkRegex = "(a"
	err := c.Validate()
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "fetch.concurrency: 0 is out of range") ||
		!strings.Contains(err.Error(), "scraper.link_regex: missing closing )") {
		t.Fatalf("got %v", err)
	}
}

// TestClusterURLs: the cluster forms go-redis reads are accepted.
func TestClusterURLs(t *testing.T) {
	for _, u := range []string{
		"redis://h1:7000?addr=h2:7001&addr=h3:7002",
		"rediss://user:pw@h1:7000/0?addr=h2:7001",
		"redis://[::1]:7000?addr=[::1]:7001",
	} {
		if _, err := parse([]byte("crawl: x\ntracker: {kind: redis, url: '"+u+"'}\nscraper: {seeds: [\"https://e.example/\"]}\n"), "test.yaml", envOf(testEnv)); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
}

// TestEveryBadLabelAtOnce: a label list with several bad labels names each
// of them (a space, a comma, empty, twice), like every other problem, and
// so does one over the limit that also holds bad labels.
func TestEveryBadLabelAtOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, labels string
		want         []string
	}{
		{"four kinds", "[ok, 'a b', 'c,d', '', ok]", []string{"scraper.labels[0].labels[1]", "scraper.labels[0].labels[2]", "scraper.labels[0].labels[3]", "scraper.labels[0].labels[4]"}},
		{"too many and bad", "[a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,'q r']", []string{"scraper.labels[0].labels", "scraper.labels[0].labels[16]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte("crawl: x\nscraper: {seeds: ['http://a.org/'], labels: [{match: x, labels: "+tc.labels+"}]}\n"), "c.yaml", envOf(nil))
			got := map[string]bool{}
			for _, fe := range fieldErrors(err) {
				got[fe.Path] = true
			}
			for _, path := range tc.want {
				if !got[path] {
					t.Errorf("no problem at %s: %v", path, err)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("got %d problems, want %d: %v", len(got), len(tc.want), err)
			}
		})
	}
}
