package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/redissaver"
	"github.com/distscrape/distscrape/saver/s3saver"
	"github.com/distscrape/distscrape/saver/tarsaver"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// TestRoundTrip: good configs parse, and Marshal writes YAML that parses
// back to the same Config.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{"minimal": minimal, "full": full, "id": idCrawl} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, err := parse([]byte(src), name, envOf(testEnv))
			if err != nil {
				t.Fatal(err)
			}
			out, err := Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			again, err := parse(out, name+"-marshaled", envOf(nil))
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			// The marshaled file holds the ${VAR} values themselves: it no
			// longer says which were secrets.
			again.secrets = cfg.secrets
			if !reflect.DeepEqual(cfg, again) {
				t.Fatalf("round trip changed the config:\n%+v\n%+v\n%s", cfg, again, out)
			}
		})
	}
}

func TestFullValues(t *testing.T) {
	t.Parallel()
	c, err := parse([]byte(full), "full.yaml", envOf(testEnv))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"tracker.url expanded", c.Key("tracker.url"), "redis://user:s3cret@redis.internal:6379/0"},
		{"lease_ttl", c.Tracker.LeaseTTL, 5 * time.Minute},
		{"heartbeat default", c.Tracker.Heartbeat, 2 * time.Second},
		{"heartbeat_misses default", c.Tracker.HeartbeatMisses, 3},
		{"backoff.max", c.Tracker.Backoff.Max, time.Hour},
		{"max_body", c.Fetch.MaxBody, Size(1572864)},
		{"per_host_rate", c.Fetch.PerHostRate, 2.5},
		{"robots", *c.Fetch.Robots, false},
		{"header", c.Fetch.Headers["Authorization"], "Bearer tok123"},
		{"status", c.Scraper.Validate.Status, []int{200, 203}},
		{"exclude keeps $", c.Scraper.Scope.ExcludeRegex, `\.(?:jpg|png)$`},
		{"saver path", c.Key("saver.path"), "out/{crawl}-{worker}.tar.zst"},
		{"limits.max_pages", c.Limits.MaxPages, int64(1_000_000)},
		{"revisit", c.Scraper.Revisit, []RevisitRule{{Match: `^https://example\.org/news/`, Every: time.Hour}}},
		{"labels", c.Scraper.Labels, []LabelRule{{Match: "/docs/", Labels: []string{"docs", "v2"}, Inherit: true}}},
		{"priority", c.Scraper.Priority, []PriorityRule{{Match: `\.html$`, Priority: 7}, {Match: "/old/"}}},
		{"breadth_first", c.Scraper.BreadthFirst, true},
		{"limits.max_bytes", c.Limits.MaxBytes, 3 * GiB / 2},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
}

// TestDefaults: every default documented in config.go is applied.
func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := parse([]byte(minimal), "m.yaml", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"tracker.kind", c.Tracker.Kind, "memory"},
		{"tracker.lease_ttl", c.Tracker.LeaseTTL, 5 * time.Minute},
		{"tracker.batch", c.Tracker.Batch, 32},
		{"tracker.max_attempts", c.Tracker.MaxAttempts, 3},
		{"tracker.backoff.base", c.Tracker.Backoff.Base, 2 * time.Second},
		{"tracker.backoff.max", c.Tracker.Backoff.Max, 5 * time.Minute},
		{"scraper.kind", c.Scraper.Kind, "link"},
		{"scraper.link_regex", c.Scraper.LinkRegex, ""}, // the scraper's built-in finder
		{"scraper.requisites", *c.Scraper.Requisites, true},
		{"scraper.scope.hosts", c.Scraper.Scope.Hosts, []string(nil)}, // the scraper derives it from the seeds
		{"scraper.validate.status", c.Scraper.Validate.Status, []int{200}},
		{"scraper.regex_timeout", c.Scraper.RegexTimeout, time.Second},
		{"scraper.max_links", c.Scraper.MaxLinks, 10000},
		{"scraper.content_types", c.Scraper.ContentTypes, DefaultContentTypes},
		{"fetch.concurrency", c.Fetch.Concurrency, 16},
		{"fetch.per_host_concurrency", c.Fetch.PerHostConcurrency, 4},
		{"fetch.timeout", c.Fetch.Timeout, 30 * time.Second},
		{"fetch.max_body", c.Fetch.MaxBody, 64 * MiB},
		{"fetch.max_redirects", c.Fetch.MaxRedirects, 10},
		{"fetch.user_agent", c.Fetch.UserAgent, "distscrape/1"},
		{"fetch.robots", *c.Fetch.Robots, true},
		{"saver.kind", c.Saver.Kind, "file"},
		{"saver.dir", c.Key("saver.dir"), "out"},
		{"saver.layout", c.Key("saver.layout"), "mirror"},
		{"saver.keep_versions", c.Saver.KeepVersions, 3},
		{"log.level", c.Log.Level, "info"},
		{"log.format", c.Log.Format, "text"},
		{"limits (unlimited)", c.Limits, Limits{}},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
	per := map[string]struct {
		keys map[string]string
		want saver.Section
		keep int
	}{
		"tar":   {nil, &tarsaver.Section{Path: "out/{crawl}-{worker}.tar.gz"}, 0},
		"redis": {map[string]string{"url": "redis://h"}, &redissaver.Section{URL: "redis://h", Key: "{crawl}:page:{id}"}, 3},
		"s3": {map[string]string{"bucket": "pages"}, &s3saver.Section{Bucket: "pages", Key: "{crawl}/{sha256}", Region: "us-east-1",
			Concurrency: 16}, 3},
		"file": {map[string]string{"layout": "flat"}, &filesaver.Section{Dir: "out", Layout: "flat", Name: "{id}"}, 3},
		"warc": {nil, &warcsaver.Section{Dir: "out", MaxSize: GiB}, 0},
		"none": {nil, saver.Section(nil), 0},
	}
	for kind, want := range per {
		c := &Config{Crawl: "x", Saver: Saver{Kind: kind}}
		for k, v := range want.keys {
			if err := c.SetKey("saver."+k, v); err != nil {
				t.Fatal(err)
			}
		}
		c.ApplyDefaults()
		if want.want != nil && !reflect.DeepEqual(c.Saver.Driver, want.want) || c.Saver.KeepVersions != want.keep {
			t.Errorf("%s saver defaults = %+v (keep_versions %d), want %+v (%d)", kind, c.Saver.Driver, c.Saver.KeepVersions,
				want.want, want.keep)
		}
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{"A": "x", "EMPTY": ""})
	tests := []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${A}/${A}", "x/x", ""},
		{"a${EMPTY}b", "ab", ""},
		{"cost $$5 and $${A}", "cost $5 and ${A}", ""},
		{`\d+$`, `\d+$`, ""},
		{"$", "$", ""},
		{"${B}", "", "environment variable B is not set"},
		{"${A", "", "unterminated ${"},
		{"${1A}", "", "invalid variable name"},
	}
	for _, tt := range tests {
		got, err := expand(tt.in, env)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("expand(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestEnvOverrides: DISTSCRAPE_* variables replace the file's values.
func TestEnvOverrides(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"DISTSCRAPE_TRACKER_URL":             "redis://127.0.0.1:6390/2",
		"DISTSCRAPE_TRACKER_KIND":            "redis",
		"DISTSCRAPE_FETCH_CONCURRENCY":       "64",
		"DISTSCRAPE_TRACKER_BACKOFF_BASE":    "2s",
		"DISTSCRAPE_FETCH_MAX_BODY":          "1MiB",
		"DISTSCRAPE_FETCH_ROBOTS":            "false",
		"DISTSCRAPE_SCRAPER_SEEDS":           "https://a.org/, https://b.org/",
		"DISTSCRAPE_SCRAPER_VALIDATE_STATUS": "200,204",
		"DISTSCRAPE_LIMITS_MAX_PAGES":        "200",
		"DISTSCRAPE_LIMITS_MAX_BYTES":        "10MB",
		"DISTSCRAPE_CONFIG":                  "ignored.yaml",
	}
	c, err := parse([]byte(minimal+"fetch: {concurrency: 8}\n"), "m.yaml", envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if c.Key("tracker.url") != env["DISTSCRAPE_TRACKER_URL"] || c.Tracker.Kind != "redis" || c.Fetch.Concurrency != 64 ||
		c.Tracker.Backoff.Base != 2*time.Second || c.Fetch.MaxBody != MiB || *c.Fetch.Robots ||
		!reflect.DeepEqual(c.Scraper.Seeds, []string{"https://a.org/", "https://b.org/"}) ||
		!reflect.DeepEqual(c.Scraper.Validate.Status, []int{200, 204}) ||
		c.Limits != (Limits{MaxPages: 200, MaxBytes: 10_000_000}) {
		t.Fatalf("overrides not applied: %+v", c)
	}
	_, err = parse([]byte(minimal), "m.yaml", envOf(map[string]string{"DISTSCRAPE_FETCH_CONCURRENCY": "lots"}))
	if err == nil || !strings.Contains(err.Error(), `fetch.concurrency: from DISTSCRAPE_FETCH_CONCURRENCY: expected an integer, got "lots"`) {
		t.Fatalf("bad override: %v", err)
	}
	if got := EnvVar("fetch.per_host_concurrency"); got != "DISTSCRAPE_FETCH_PER_HOST_CONCURRENCY" {
		t.Errorf("EnvVar = %s", got)
	}
	found := false
	for _, kv := range EnvVars() {
		found = found || kv == [2]string{"DISTSCRAPE_TRACKER_LEASE_TTL", "tracker.lease_ttl"}
		if kv[1] == "fetch.headers" || kv[1] == "tracker" {
			t.Errorf("%s is not a scalar key", kv[1])
		}
	}
	if !found {
		t.Error("EnvVars lacks DISTSCRAPE_TRACKER_LEASE_TTL")
	}
}

// TestAnchorsAndMerge: YAML anchors and merge keys work, explicit keys win.
func TestAnchorsAndMerge(t *testing.T) {
	t.Parallel()
	src := minimal + "fetch: &f {concurrency: 8, timeout: 5s}\nsaver: {kind: none}\n" +
		"tracker:\n  backoff: &b {base: 1s, max: 10s}\n"
	c, err := parse([]byte(src), "a.yaml", envOf(nil))
	if err != nil || c.Fetch.Concurrency != 8 || c.Tracker.Backoff.Max != 10*time.Second {
		t.Fatalf("anchors: %v %+v", err, c)
	}
	src = "base: &base {concurrency: 8, timeout: 5s}\n"
	_, err = parse([]byte(minimal+src), "a.yaml", envOf(nil))
	if err == nil || !strings.Contains(err.Error(), "base: unknown key") {
		t.Fatalf("top-level anchor holder should be unknown: %v", err)
	}
	src = minimal + "x-f: &f {concurrency: 8}\n"
	_, _ = parse([]byte(src), "a.yaml", envOf(nil)) // reported as unknown; must not panic
	src = minimal + "fetch:\n  <<: &f {concurrency: 8, timeout: 5s}\n  concurrency: 9\n"
	c, err = parse([]byte(src), "a.yaml", envOf(nil))
	if err != nil || c.Fetch.Concurrency != 9 || c.Fetch.Timeout != 5*time.Second {
		t.Fatalf("merge: %v %+v", err, c.Fetch)
	}
	src = minimal + "fetch: &f\n  <<: *f\n"
	if _, err := parse([]byte(src), "a.yaml", envOf(nil)); err == nil {
		t.Fatal("self-referencing merge accepted")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "crawl.yaml")
	if err := os.WriteFile(path, []byte(minimal+"tracker:\n  lease_tll: 5m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "tracker.lease_tll: unknown key (did you mean lease_ttl?) ("+path+":6)") {
		t.Fatalf("got %v", err)
	}
	if err := os.WriteFile(path, []byte(minimal), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DISTSCRAPE_FETCH_CONCURRENCY", "3")
	c, err := Load(path)
	if err != nil || c.Crawl != "example" || c.Fetch.Concurrency != 3 {
		t.Fatalf("Load: %v %+v", err, c)
	}
	c, err = DecodeFile(path)
	if err != nil || c.Tracker.Kind != "" || c.Fetch.Concurrency != 3 {
		t.Fatalf("DecodeFile applied defaults or lost the override: %v %+v", err, c)
	}
	_, err = Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, fs.ErrNotExist) || !strings.HasSuffix(err.Error(), "missing.yaml: not found") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestUnknownEnv(t *testing.T) {
	t.Parallel()
	got := UnknownEnv([]string{"PATH=/bin", "DISTSCRAPE_CONFIG=c.yaml", "DISTSCRAPE_FETCH_CONCURENCY=3",
		"DISTSCRAPE_TRACKER_URL=redis://h", "DISTSCRAPE_ZZZ=1"}, "DISTSCRAPE_CONFIG")
	want := []string{"DISTSCRAPE_FETCH_CONCURENCY (did you mean DISTSCRAPE_FETCH_CONCURRENCY?)", "DISTSCRAPE_ZZZ"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("UnknownEnv = %q, want %q", got, want)
	}
}

// TestMergeBomb: merges of merges cannot expand without bound.
func TestMergeBomb(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("crawl: x\nm0: &m0 {concurrency: 1, timeout: 1s}\n")
	for i := 1; i <= 7; i++ {
		fmt.Fprintf(&b, "m%d: &m%d {<<: [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*m%d", i-1)
		}
		b.WriteString("]}\n")
	}
	b.WriteString("fetch: {<<: *m7}\n")
	start := time.Now()
	_, err := parse([]byte(b.String()), "bomb.yaml", envOf(nil))
	if err == nil || !strings.Contains(err.Error(), "expand to more than") {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}
