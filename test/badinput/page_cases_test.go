package badinput

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/distscrape/distscrape/test/testbin"
)

// pageCase crawls one hostile page next to a good one: the crawl finishes
// (exit 0), the good page is saved, the hostile one is a dead letter whose
// reason contains reason, and nothing of it is written.
func pageCase(name, path, reason string, linkRegex ...string) hostile {
	return hostile{
		name: "page/" + name,
		run: func(b *bench) testbin.Result {
			h := startHostile(b.t)
			b.t.Cleanup(func() {
				if b.t.Failed() {
					b.t.Logf("requests: %v", h.hits)
				}
			})
			scr := linkScraper(h.url(path), h.url("/ok"))
			if len(linkRegex) > 0 {
				scr = fmt.Sprintf("scraper: {kind: link, seeds: [%q, %q], link_regex: %q, regex_timeout: 200ms}", h.url(path), h.url("/ok"), linkRegex[0])
			}
			cfg := b.config("crawl: pages", b.memoryTracker(""), scr,
				"fetch: {robots: false, timeout: 2s, max_body: 1MiB, max_redirects: 5}", "saver: {kind: file, dir: out}")
			return b.exec(2*time.Minute, "crawl", "-c", cfg)
		},
		code: exitDeadLetters,
		want: []string{"1 done, 1 failed"},
		check: func(b *bench, _ testbin.Result) {
			cfg := b.dir + "/crawl.yaml"
			b.settled(cfg)
			dead := b.deadLetters(cfg)
			if len(dead) != 1 {
				b.t.Fatalf("dead letters %v, want the hostile page only", dead)
			}
			for k, why := range dead {
				if !strings.HasSuffix(k, path) || !strings.Contains(why, reason) {
					b.t.Errorf("dead letter %s: %q, want %s with a reason saying %q", k, why, path, reason)
				}
			}
			if got := pageFiles(b.t, filepath.Join(b.dir, "out")); len(got) != 1 || !strings.HasSuffix(got[0], "ok") {
				b.t.Errorf("page files %v, want only the good page", got)
			}
		},
	}
}

func pageCases() []hostile {
	const links = 100000
	return []hostile{
		pageCase("gzip bomb", "/bomb", "too large"),
		pageCase("endless body", "/endless", "too large"),
		pageCase("slowloris headers", "/slowloris", "timeout"),
		pageCase("invalid chunked encoding", "/badchunk", "chunk"),
		pageCase("body shorter than Content-Length", "/shortbody", "EOF"),
		pageCase("negative Content-Length", "/badlength", "Content-Length"),
		pageCase("redirect to itself", "/loop", "redirects"),
		pageCase("redirect ping-pong", "/ping", "redirects"),
		pageCase("redirect to cloud metadata", "/metadata", "metadata"),
		pageCase("redirect out of scope", "/offsite", "scope"),
		// A catastrophic regex on a hostile page times out: the page is a
		// final failure, the worker carries on.
		pageCase("ReDoS", "/redos", "regex timeout", `(a|aa)+(?=")`),
		{
			// A page with 100,000 links adds scraper.max_links of them.
			name: "page/huge link count",
			run: func(b *bench) testbin.Result {
				h := startHostile(b.t)
				b.t.Cleanup(func() {
					if b.t.Failed() {
						b.t.Logf("leaf requests %d", h.HitsPrefix("/leaf/"))
					}
				})
				cfg := b.config("crawl: links", b.memoryTracker(""),
					fmt.Sprintf("scraper: {kind: link, seeds: [%q], link_regex: 'href=\"([^\"]+)\"', max_links: 50}", h.url(fmt.Sprintf("/links/%d", links))),
					"fetch: {robots: false, max_body: 16MiB}", "saver: {kind: none}")
				return b.exec(2*time.Minute, "crawl", "-c", cfg)
			},
			want: []string{"51 done, 0 failed"},
			check: func(b *bench, _ testbin.Result) {
				if st := b.settled(b.dir + "/crawl.yaml"); st.Added != 51 {
					b.t.Errorf("tracker %+v: want the page and its first 50 links only", st)
				}
			},
		},
	}
}
