package badinput

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// badWorkerNames are the ways a worker name can leave its folder or its
// key, as --id or DISTSCRAPE_ID. (A NUL cannot be passed to a process at
// all; tracker.ValidateWorker and the savers' tests cover it.)
var badWorkerNames = map[string]string{
	"dot-dot":   "..",
	"dot":       ".",
	"slash":     "a/b",
	"backslash": `a\b`,
	"empty":     "",
	"dash":      "-x",
	"hidden":    ".w",
	"newline":   "a\nb",
	"unicode":   "wörker",
	"long":      strings.Repeat("w", 200),
	"braces":    "{crawl}",
}

// workerNameCase runs a file-saver crawl as worker name, passed as --id or
// in DISTSCRAPE_ID, over an output directory where another worker left its
// manifest and an unfinished temporary file: refused with exit 2 naming
// --id, before any request, and nothing of the other worker touched.
func workerNameCase(label, name string, env bool) hostile {
	how := "--id"
	if env {
		how = "DISTSCRAPE_ID"
	}
	return hostile{
		name: "worker name/" + how + "/" + label,
		run: func(b *bench) testbin.Result {
			site := fixturesite.Start(b.t, fixturesite.Options{Pages: 5})
			for _, f := range []string{"manifest-names-other.jsonl", "tmp/other/1"} {
				p := filepath.Join(b.dir, "out", filesaver.MetaDir, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					b.t.Fatal(err)
				}
				b.file(filepath.Join("out", filesaver.MetaDir, f), []byte("another worker's"))
			}
			cfg := b.config("crawl: names", b.memoryTracker(""), linkScraper(site.URL()+"/"), "saver: {kind: file, dir: out}")
			args := []string{"crawl", "-c", cfg, "--no-progress"}
			if env {
				b.cmd.Env = []string{"DISTSCRAPE_ID=" + name}
			} else {
				args = append(args, "--id", name)
			}
			r := b.exec(time.Minute, args...)
			if n := site.Total(); n != 0 {
				b.t.Errorf("%d requests made by a worker with a bad name", n)
			}
			return r
		},
		code:  2,
		want:  []string{"--id", "bad worker name"},
		check: func(b *bench, _ testbin.Result) { b.unchanged() },
	}
}

// pageServer serves fixed pages by request URI, path and query exactly as
// sent (the fixture site's pages cannot be /c/a?q and /c/a%3Fq), 404 for
// anything else.
type pageServer struct {
	base  string
	pages map[string]string
}

func startPages(t *testing.T, pages map[string]string) *pageServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &pageServer{base: "http://" + ln.Addr().String(), pages: pages}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := s.pages[r.RequestURI]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

// scopeCase crawls a fixture site whose pages all link to a second fixture
// site on another port of 127.0.0.1: never followed. fleet seeds with
// `distscrape seed` and names the scope in scope.hosts (the README's fleet
// workflow); else the seeds' default scope is the scope.
func scopeCase(name string, fleet bool) hostile {
	return hostile{
		name: name,
		run: func(b *bench) testbin.Result {
			other := fixturesite.Start(b.t, fixturesite.Options{Pages: 5})
			site := fixturesite.Start(b.t, fixturesite.Options{Pages: 20, Offsite: other.URL() + "/"})
			b.t.Cleanup(func() {
				if n := other.Total(); n != 0 {
					b.t.Errorf("%d requests to another port of 127.0.0.1, out of scope", n)
				}
			})
			if !fleet {
				cfg := b.config("crawl: ports", b.memoryTracker(""), linkScraper(site.URL()+"/"), "saver: {kind: file, dir: out}")
				return b.exec(time.Minute, "crawl", "-c", cfg, "--no-progress")
			}
			cfg := b.config("crawl: fleet", b.memoryTracker(""), "saver: {kind: file, dir: out}",
				"scraper: {kind: link, link_regex: 'href=\"([^\"]+)\"', scope: {hosts: ['"+strings.TrimPrefix(site.URL(), "http://")+"']}}")
			if r := b.cmd.Run(b.t, time.Minute, "seed", "-c", cfg, site.URL()+"/"); r.Code != 0 {
				b.t.Fatalf("seed: %s", r)
			}
			return b.exec(time.Minute, "worker", "-c", cfg, "--id", "w1", "--no-progress")
		},
		check: func(b *bench, _ testbin.Result) {
			if st := b.settled(b.dir + "/crawl.yaml"); st.Added != 20 {
				b.t.Errorf("tracker %+v: want the site's 20 pages, nothing else", st)
			}
		},
	}
}

// noSeedsCase runs one command on a link crawl with no seeds and no scope:
// every command refuses it, naming scraper.scope.hosts.
func noSeedsCase(args ...string) hostile {
	return hostile{
		name: "scope/no seeds, no scope.hosts/" + args[0],
		run: func(b *bench) testbin.Result {
			cfg := b.config("crawl: fleet", b.memoryTracker(""), "scraper: {kind: link}", "saver: {kind: file, dir: out}")
			return b.exec(time.Minute, append([]string{args[0], "-c", cfg}, args[1:]...)...)
		},
		code: 2, want: []string{"scraper.scope.hosts", "scraper.seeds"},
		check: func(b *bench, _ testbin.Result) { b.unchanged() },
	}
}

// collidingPages is a site whose home page links to pages that an earlier
// layout gave one file name, or a file and a directory of one name.
func collidingPages(t *testing.T, paths ...string) *pageServer {
	pages := map[string]string{}
	home := ""
	for _, p := range paths {
		pages[p] = "body of " + p
		home += fmt.Sprintf(`<a href="%s">x</a>`, p)
	}
	pages["/"] = home
	return startPages(t, pages)
}

// nameClash are the ways two pages met in one name: a query and an
// escaped "?", an escaped "/" and a "/", a sub-delimiter and its escape,
// an empty segment, and a file and a directory of one name (both orders).
var nameClash = []string{"/c/a?q", "/c/a%3Fq", "/s/a%2Fb", "/s/a/b", "/d/a!", "/d/a%21", "/e/a//b", "/e/a/b",
	"/fd/x.html", "/fd/x.html/y/", "/gd/y/", "/gd/y.html", "/gd/y.html/z.css"}

// mirrorHasAll checks that every page of site has its own file under dir
// (found through the manifest), with its own body.
func mirrorHasAll(b *bench, dir string, site *pageServer) {
	b.t.Helper()
	manifests, _ := filepath.Glob(filepath.Join(dir, filesaver.MetaDir, "manifest-*.jsonl"))
	paths := map[string]string{} // key -> path, the last line wins
	for _, m := range manifests {
		data, err := os.ReadFile(m)
		if err != nil {
			b.t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var rec struct{ Key, Path string }
			if json.Unmarshal([]byte(line), &rec) == nil {
				paths[rec.Key] = rec.Path
			}
		}
	}
	for uri, body := range site.pages {
		p, ok := paths[site.base+uri]
		if !ok {
			b.t.Errorf("%s: not in the manifest", uri)
			continue
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if st, err := os.Stat(full); err == nil && st.IsDir() {
			full = filepath.Join(full, "index.html") // moved aside by a page under it
		}
		if got, err := os.ReadFile(full); err != nil || string(got) != body {
			b.t.Errorf("%s: %s holds %q, %v; want its own body", uri, p, got, err)
		}
	}
}

func namesScopeCases() []hostile {
	var cases []hostile
	for _, args := range [][]string{{"check"}, {"seed", "http://127.0.0.1:1/"}, {"worker", "--id", "w1"}, {"crawl"}, {"status"}} {
		cases = append(cases, noSeedsCase(args...))
	}
	for label, name := range badWorkerNames {
		cases = append(cases, workerNameCase(label, name, false))
		if label != "newline" && label != "empty" {
			cases = append(cases, workerNameCase(label, name, true))
		}
	}
	cases = append(cases,
		hostile{
			// Distinct URLs, one file each: the first body was replaced
			// while both items were done.
			name: "names/mirror: distinct URLs never share a file",
			run: func(b *bench) testbin.Result {
				site := collidingPages(b.t, nameClash...)
				b.t.Cleanup(func() { mirrorHasAll(b, filepath.Join(b.dir, "out"), site) })
				cfg := b.config("crawl: names", b.memoryTracker(""), linkScraper(site.base+"/"), "saver: {kind: file, dir: out}")
				return b.exec(time.Minute, "crawl", "-c", cfg, "--no-progress")
			},
			check: func(b *bench, _ testbin.Result) {
				if st := b.settled(b.dir + "/crawl.yaml"); st.Done != int64(len(nameClash)+1) {
					b.t.Errorf("tracker %+v: want every page done", st)
				}
			},
		},
		hostile{
			// A file and a directory of one name in an archive: GNU tar
			// exited 2 and Python's tarfile aborted.
			name: "names/tar: archive extracts with tar and tarfile",
			run: func(b *bench) testbin.Result {
				site := collidingPages(b.t, nameClash...)
				cfg := b.config("crawl: names", b.memoryTracker(""), linkScraper(site.base+"/"), "saver: {kind: tar, path: 'out/names.tar'}")
				return b.exec(time.Minute, "crawl", "-c", cfg, "--no-progress", "--id", "w1")
			},
			check: func(b *bench, _ testbin.Result) {
				archive := filepath.Join(b.dir, "out", "names.tar")
				extract := [][]string{{"tar", "-xf", archive, "-C"}}
				if _, err := exec.LookPath("python3"); err == nil {
					extract = append(extract, []string{"python3", "-c", "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])", archive})
				}
				for _, argv := range extract {
					out := filepath.Join(b.dir, "x-"+argv[0])
					os.Mkdir(out, 0o755)
					if msg, err := exec.Command(argv[0], append(argv[1:], out)...).CombinedOutput(); err != nil {
						b.t.Errorf("%s cannot extract the archive: %v\n%s", argv[0], err, msg)
					}
				}
			},
		},
		// The README's fleet workflow: seeded by `distscrape seed`, the
		// scope is scope.hosts.
		scopeCase("scope/fleet seed + worker with scope.hosts", true),
		// The default scope is the seed's host and port: the config once
		// dropped the port and followed every port of the host.
		scopeCase("scope/default scope is the seed's port", false),
		hostile{
			// requeue --worker takes the same name: the same rule.
			name: "worker name/requeue --worker ..",
			run: func(b *bench) testbin.Result {
				cfg := b.config("crawl: names", b.memoryTracker(""), linkScraper("http://127.0.0.1:1/"), "saver: {kind: file, dir: out}")
				return b.exec(time.Minute, "requeue", "-c", cfg, "--worker", "../x")
			},
			code: 2, want: []string{"--worker", "bad worker name"},
			check: func(b *bench, _ testbin.Result) { b.unchanged() },
		},
		hostile{
			// A metrics address in use is found before any work, not
			// after the crawl.
			name: "process/metrics.addr in use",
			run: func(b *bench) testbin.Result {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.t.Fatal(err)
				}
				b.t.Cleanup(func() { ln.Close() })
				site := fixturesite.Start(b.t, fixturesite.Options{Pages: 5})
				cfg := b.config("crawl: metrics", b.memoryTracker(""), linkScraper(site.URL()+"/"),
					"saver: {kind: file, dir: out}", "metrics: {addr: '"+ln.Addr().String()+"'}")
				r := b.exec(time.Minute, "crawl", "-c", cfg, "--no-progress")
				if n := site.Total(); n != 0 {
					b.t.Errorf("%d requests made before the metrics address was found in use", n)
				}
				return r
			},
			code: 2, want: []string{"metrics.addr", "address already in use"},
			check: func(b *bench, _ testbin.Result) { b.unchanged() },
		},
	)
	return cases
}
