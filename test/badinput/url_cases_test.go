package badinput

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/distscrape/distscrape/test/testbin"
)

func urlCases() []hostile {
	return []hostile{
		{
			// Dot-dot in every spelling is resolved (RFC 3986) before the
			// saver sees the URL, and the saver keeps every name inside its
			// directory anyway: nothing is written outside out/.
			name: "url/traversal",
			run: func(b *bench) testbin.Result {
				h := startHostile(b.t)
				cfg := b.config("crawl: traversal", b.memoryTracker(""),
					linkScraper(h.url("/a/b/../../../../escape1"), h.url("/%2e%2e/%2e%2e/escape2"), h.url("/..%2f..%2fescape3"), h.url("/x/..\\..\\escape4")),
					"fetch: {robots: false}", "saver: {kind: file, dir: out}")
				return b.exec(time.Minute, "crawl", "-c", cfg)
			},
			want: []string{"4 done, 0 failed"},
			check: func(b *bench, _ testbin.Result) {
				for _, f := range listFiles(b.t, b.dir) {
					if f != "crawl.yaml" && !strings.HasPrefix(f, "state") && !strings.HasPrefix(f, "out") {
						b.t.Errorf("%s written outside the output directory", f)
					}
				}
				if got := pageFiles(b.t, filepath.Join(b.dir, "out")); len(got) != 4 {
					b.t.Errorf("page files %v, want 4", got)
				}
				b.settled(b.dir + "/crawl.yaml")
			},
		},
		{
			name: "url/longer than the tracker's limit",
			run: func(b *bench) testbin.Result {
				cfg := b.config("crawl: long", b.memoryTracker(""), linkScraper("http://127.0.0.1:1/"), "saver: {kind: none}")
				return b.exec(time.Minute, "seed", "-c", cfg, "http://127.0.0.1:1/"+strings.Repeat("a", 9000))
			},
			code: 2, want: []string{"longer than the limit of 8192"},
			check: func(b *bench, _ testbin.Result) {
				if st := b.status(b.dir + "/crawl.yaml"); st.Added != 0 {
					b.t.Errorf("tracker %+v: a refused seed was added", st)
				}
			},
		},
		{
			// An IDN host and its punycode are one item.
			name: "url/IDN and punycode",
			run: func(b *bench) testbin.Result {
				cfg := b.config("crawl: idn", b.memoryTracker(""), linkScraper("http://127.0.0.1:1/"), "saver: {kind: none}")
				return b.exec(time.Minute, "seed", "-c", cfg, "http://BÜCHER.example/a", "http://xn--bcher-kva.example/a", "http://bücher.example:80/a")
			},
			want: []string{"added 1 new items of 3"},
			check: func(b *bench, _ testbin.Result) {
				if st := b.status(b.dir + "/crawl.yaml"); st.Added != 1 {
					b.t.Errorf("tracker %+v, want one item", st)
				}
			},
		},
		{
			// An IPv6 literal is crawled on ::1 and saved under a safe name.
			name: "url/IPv6 literal",
			run: func(b *bench) testbin.Result {
				ln, err := net.Listen("tcp", "[::1]:0")
				if err != nil {
					b.t.Fatalf("no IPv6 loopback (::1) on this machine: %v", err)
				}
				h := serveHostile(b.t, ln)
				cfg := b.config("crawl: v6", b.memoryTracker(""),
					linkScraper(h.url("/ok"), strings.Replace(h.url("/ok"), "[::1]", "[0:0:0:0:0:0:0:1]", 1)),
					"fetch: {robots: false}", "saver: {kind: file, dir: out}")
				return b.exec(time.Minute, "crawl", "-c", cfg)
			},
			want: []string{"1 done, 0 failed"},
			check: func(b *bench, _ testbin.Result) {
				got := pageFiles(b.t, filepath.Join(b.dir, "out"))
				if len(got) != 1 {
					b.t.Fatalf("page files %v, want one: both spellings of ::1 are one page", got)
				}
				if body, err := os.ReadFile(filepath.Join(b.dir, "out", got[0])); err != nil || string(body) != okBody {
					b.t.Errorf("%s holds %q (%v), want the page", got[0], body, err)
				}
			},
		},
		{
			name: "url/not http",
			run: func(b *bench) testbin.Result {
				cfg := b.config("crawl: schemes", b.memoryTracker(""), linkScraper("http://127.0.0.1:1/"), "saver: {kind: none}")
				return b.exec(time.Minute, "seed", "-c", cfg, "http://127.0.0.1:1/fine", "file:///etc/passwd")
			},
			code: 2, want: []string{"file:///etc/passwd"},
			check: func(b *bench, _ testbin.Result) {
				if st := b.status(b.dir + "/crawl.yaml"); st.Added != 0 {
					b.t.Errorf("tracker %+v: a refused seed list was added in part", st)
				}
			},
		},
	}
}
