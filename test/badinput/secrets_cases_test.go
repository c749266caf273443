package badinput

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// Secrets (issue 13, points 11 and 12): a password is never printed, not
// even in part, whichever key or variable holds its URL, whichever command
// reads it, whichever character makes the URL parser cut it in two; a
// value that came from ${VAR} is a secret wherever it ends up.

// pwHead and pwTail are the halves of every password below: neither may
// ever be printed.
const pwHead, pwTail = "Pq7hXk", "Zt4wMv"

// urlSource is one place a credential URL comes from: the config lines
// (and environment) that put url there, and the key an error names.
type urlSource struct {
	key    string
	path   string // the key path errors name
	config func(b *bench, url string) (lines []string, env []string)
}

func urlSources() []urlSource {
	base := func(b *bench, extra ...string) []string {
		return append([]string{"crawl: sec", b.memoryTracker(""), "scraper: {kind: link, seeds: ['http://127.0.0.1:1/']}",
			"saver: {kind: none}"}, extra...)
	}
	redisTr := func(url string) string {
		return fmt.Sprintf("tracker: {kind: redis, url: %q, max_attempts: 1}", url)
	}
	return []urlSource{
		{"tracker.url", "tracker.url", func(b *bench, url string) ([]string, []string) {
			return []string{"crawl: sec", redisTr(url), "scraper: {kind: link, seeds: ['http://127.0.0.1:1/']}", "saver: {kind: none}"}, nil
		}},
		{"saver.url", "saver.url", func(b *bench, url string) ([]string, []string) {
			return append(base(b)[:3], fmt.Sprintf("saver: {kind: redis, url: %q}", url)), nil
		}},
		{"fetch.proxies", "fetch.proxies[0]", func(b *bench, url string) ([]string, []string) {
			return base(b, fmt.Sprintf("fetch: {robots: false, proxies: [%q]}", url)), nil
		}},
		{"DISTSCRAPE_TRACKER_URL", "tracker.url", func(b *bench, url string) ([]string, []string) {
			return []string{"crawl: sec", "tracker: {kind: redis, max_attempts: 1}", "scraper: {kind: link, seeds: ['http://127.0.0.1:1/']}",
				"saver: {kind: none}"}, []string{"DISTSCRAPE_TRACKER_URL=" + url}
		}},
	}
}

func secretCases() []hostile {
	var out []hostile
	// Passwords a URL parser cuts in two: the config is refused (exit 2),
	// naming the key, and no half of the password is printed.
	for _, src := range urlSources() {
		for _, sep := range []string{"#", "/", "?", " ", "%zz"} {
			for _, cmd := range []string{"check", "crawl", "status"} {
				src, sep, cmd := src, sep, cmd
				out = append(out, hostile{
					name: fmt.Sprintf("secrets/%s password with %q, %s", src.key, sep, cmd),
					run: func(b *bench) testbin.Result {
						return runWithURL(b, src, cmd, credURL(src.key, "u:"+pwHead+sep+pwTail, "127.0.0.1:1"))
					},
					code:  2,
					want:  []string{src.path + ": invalid URL"},
					never: []string{pwHead, pwTail},
				})
			}
		}
	}
	// Passwords that parse ('@' in the password, or plain) but are wrong:
	// Redis refuses them, and the error still shows neither half.
	for _, src := range urlSources() {
		if src.key == "fetch.proxies" {
			continue // no Redis behind a proxy: proxies/crawl below
		}
		for _, sep := range []string{"@", ""} {
			for _, cmd := range []string{"check", "crawl"} {
				src, sep, cmd := src, sep, cmd
				out = append(out, hostile{
					name: fmt.Sprintf("secrets/%s wrong password with %q, %s", src.key, sep, cmd),
					run: func(b *bench) testbin.Result {
						rs := redistest.Start(b.t, redistest.Options{Password: "right-horse-battery-77"})
						return runWithURL(b, src, cmd, credURL(src.key, "u:"+pwHead+sep+pwTail, rs.Addr()))
					},
					code:  1,
					want:  []string{"WRONGPASS"},
					never: []string{pwHead, pwTail},
				})
			}
		}
	}
	// A proxy that refuses connections: the failures the crawl records and
	// logs never show the proxy's password.
	for _, sep := range []string{"@", ""} {
		sep := sep
		out = append(out, hostile{
			name: fmt.Sprintf("secrets/fetch.proxies password with %q, crawl and failed", sep),
			run: func(b *bench) testbin.Result {
				src := urlSources()[2]
				r := runWithURL(b, src, "crawl", credURL(src.key, "u:"+pwHead+sep+pwTail, "127.0.0.1:1"))
				f := b.cmd.Run(b.t, time.Minute, "failed", "-c", filepath.Join(b.dir, "crawl.yaml"), "--json")
				return testbin.Result{Code: r.Code, Stdout: r.Stdout + f.Stdout, Stderr: r.Stderr + f.Stderr}
			},
			code:  1, // the proxy fails its check at start: the worker stops, saying why
			want:  []string{"127.0.0.1:1", "every proxy failed its check"},
			never: []string{pwHead, pwTail},
		})
	}
	return append(out, secretQueryCase())
}

// credURL is a URL with userinfo for the kind of key.
func credURL(key, userinfo, hostport string) string {
	if key == "fetch.proxies" {
		return "http://" + userinfo + "@" + hostport
	}
	return "redis://" + userinfo + "@" + hostport + "/0"
}

func runWithURL(b *bench, src urlSource, cmd, url string) testbin.Result {
	lines, env := src.config(b, url)
	cfg := b.config(append(lines, "log: {level: debug}")...)
	c := b.cmd
	c.Env = append(c.Env, env...)
	return c.Run(b.t, time.Minute, cmd, "-c", cfg)
}

// secretQueryCase: download_url_fmt with api_key=${API_KEY}, and IDs that
// fail (404): the key is in no log line (debug), no dead letter (`failed`,
// `failed --json`) and nowhere in the tracker's state files.
func secretQueryCase() hostile {
	const key = "Kq9vApiKeyW3x"
	return hostile{
		name: "secrets/api_key from ${API_KEY} in download_url_fmt",
		code: exitDeadLetters,
		run: func(b *bench) testbin.Result {
			site := fixturesite.Start(b.t, fixturesite.Options{IDs: 10})
			cfg := b.config("crawl: sec", b.memoryTracker(""),
				fmt.Sprintf(`scraper: {kind: id, seeds: ['1', '9001'], id_regex: 'data-id="(\d+)"', download_url_fmt: '%s/item/{id}?api_key=${API_KEY}'}`, site.URL()),
				"saver: {kind: none}", "log: {level: debug}")
			c := b.cmd
			c.Env = append(c.Env, "API_KEY="+key)
			r := c.Run(b.t, time.Minute, "crawl", "-c", cfg, "--no-progress")
			for _, args := range [][]string{{"failed"}, {"failed", "--json"}} {
				f := c.Run(b.t, time.Minute, append(args, "-c", cfg)...)
				r.Stdout, r.Stderr = r.Stdout+f.Stdout, r.Stderr+f.Stderr
			}
			return r
		},
		want:  []string{"9001", "api_key=xxxxx"},
		never: []string{key},
		check: func(b *bench, _ testbin.Result) {
			for _, f := range listFiles(b.t, filepath.Join(b.dir, "state")) {
				data, err := os.ReadFile(filepath.Join(b.dir, "state", f))
				if err != nil {
					b.t.Fatal(err)
				}
				if strings.Contains(string(data), key) {
					b.t.Errorf("the tracker's state file %s keeps the API key", f)
				}
			}
		},
	}
}
