package config

// Configs shared by the tests.

// minimal is the smallest valid config: a link crawl of one site.
const minimal = `
crawl: example
scraper:
  seeds: ["https://example.org/"]
`

// full sets a value for the main keys of every section (docs/config.md),
// with a redis tracker.
const full = `
crawl: example
tracker:
  kind: redis
  url: redis://user:${REDIS_PASSWORD}@redis.internal:6379/0
  lease_ttl: 5m
  batch: 32
  max_attempts: 5
  backoff: {base: 30s, max: 1h}
scraper:
  kind: link
  seeds: ["https://example.org/"]
  link_regex: 'href="([^"]+)"'
  scope:
    hosts: [example.org]
    prefixes: ["https://example.org/docs/"]
    exclude_regex: '\.(?:jpg|png)$'
    max_depth: 3
  validate: {status: [200, 203], must_match: '</html>', must_not_match: '(?i)captcha'}
  regex_timeout: 1s
  max_links: 500
  content_types: [text/html]
  revisit: [{match: '^https://example\.org/news/', every: 1h}]
  labels:
    - {match: '/docs/', labels: [docs, v2], inherit: true}
  priority: [{match: '\.html$', priority: 7}, {match: '/old/', priority: 0}]
  breadth_first: true
fetch:
  concurrency: 64
  per_host_concurrency: 8
  per_host_rate: 2.5
  timeout: 30s
  max_body: 1.5MiB
  max_redirects: 3
  user_agent: 'distscrape/1 (+https://example.org/bot)'
  robots: false
  headers: {Authorization: "Bearer ${API_TOKEN}", Accept-Language: en}
  proxies: ["socks5://127.0.0.1:1080", "http://u:p@proxy:3128"]
saver:
  kind: tar
  path: 'out/{crawl}-{worker}.tar.zst'
limits: {max_pages: 1_000_000, max_bytes: 1.5GiB}
log: {level: debug, format: json}
metrics: {addr: '127.0.0.1:9108'}
`

// idCrawl is an ID discovery saving to S3.
const idCrawl = `
crawl: ids-1
scraper:
  kind: id
  seeds: ["1", "42"]
  id_regex: 'data-id="(\d+)"'
  download_url_fmt: 'https://example.org/item/{id}'
saver:
  kind: s3
  bucket: pages
  endpoint: http://127.0.0.1:7070
  path_style: true
  prefix: crawl/
`

// testEnv is the environment the table tests see.
var testEnv = map[string]string{"REDIS_PASSWORD": "s3cret", "API_TOKEN": "tok123"}

func envOf(m map[string]string) lookupFunc {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}
