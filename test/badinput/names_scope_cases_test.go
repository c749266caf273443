package badinput

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/distscrape/distscrape/saver"
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
			site := startSite(b.t, fixturesite.Options{Pages: 5})
			for _, f := range []string{"manifest-names-other.jsonl", "tmp/other/1"} {
				p := filepath.Join(b.dir, "out", saver.MetaDir, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					b.t.Fatal(err)
				}
				b.file(filepath.Join("out", saver.MetaDir, f), []byte("another worker's"))
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

func namesScopeCases() []hostile {
	var cases []hostile
	for label, name := range badWorkerNames {
		cases = append(cases, workerNameCase(label, name, false))
		if label != "newline" && label != "empty" {
			cases = append(cases, workerNameCase(label, name, true))
		}
	}
	cases = append(cases,
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
				site := startSite(b.t, fixturesite.Options{Pages: 5})
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
