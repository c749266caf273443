package badinput

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/distscrape/distscrape/internal/testkit/s3test"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

func saverCases() []hostile {
	return []hostile{
		{
			// A file where the output directory should be (permissions do
			// not stop root, a file does): refused before any fetch, and
			// the seed stays pending for the next run.
			name: "saver/output directory not writable",
			run: func(b *bench) testbin.Result {
				site := fixturesite.Start(b.t, fixturesite.Options{Pages: 20})
				b.file("blocker", []byte("a file, not a directory"))
				cfg := b.config("crawl: blocked", b.memoryTracker(""), linkScraper(site.URL()+"/"), "saver: {kind: file, dir: blocker/out}")
				r := b.exec(time.Minute, "crawl", "-c", cfg)
				if n := site.Total(); n != 0 {
					b.t.Errorf("%d requests made with no place to save them", n)
				}
				return r
			},
			code: 1, want: []string{"saver", "blocker", "not a directory"},
			check: func(b *bench, _ testbin.Result) {
				if st := b.status(b.dir + "/crawl.yaml"); st.Pending != 1 || st.Done != 0 {
					b.t.Errorf("tracker %+v: want the seed still pending", st)
				}
			},
		},
		{
			// A disk that fills up mid-crawl: the saves that fail are
			// failed items (retried, then dead letters naming the cause),
			// never completed; no page file is left truncated.
			name: "saver/disk full",
			code: exitDeadLetters,
			run: func(b *bench) testbin.Result {
				out := filepath.Join(b.dir, "out")
				mountTmpfs(b, out, "192k")
				site := fixturesite.Start(b.t, fixturesite.Options{Pages: 80, PageSize: 8192})
				cfg := b.config("crawl: full", b.memoryTracker(""), linkScraper(site.URL()+"/"),
					"fetch: {concurrency: 4, per_host_concurrency: 4}", "saver: {kind: file, dir: out}")
				r := b.cmd.Run(b.t, 2*time.Minute, "crawl", "-c", cfg)
				// No page file is half written.
				for _, f := range pageFiles(b.t, out) {
					got, _ := os.ReadFile(filepath.Join(out, f))
					path := "/" + strings.TrimPrefix(filepath.ToSlash(f), strings.TrimPrefix(site.URL(), "http://")+"/")
					path = strings.TrimSuffix(strings.TrimSuffix(path, "index.html"), "/")
					if path == "" {
						path = "/"
					}
					body, _, ok := site.Body(path)
					if ok && !bytes.Equal(got, body) {
						b.t.Errorf("%s: %d bytes saved, %d served: a truncated page", f, len(got), len(body))
					}
				}
				return r
			},
			check: func(b *bench, _ testbin.Result) {
				cfg := b.dir + "/crawl.yaml"
				st := b.settled(cfg)
				dead := b.deadLetters(cfg)
				if st.Failed == 0 || int64(len(dead)) != st.Failed {
					b.t.Fatalf("tracker %+v, %d dead letters: want the pages that did not fit failed", st, len(dead))
				}
				for k, why := range dead {
					if !strings.Contains(why, "no space left on device") {
						b.t.Errorf("dead letter %s: %q does not name the cause", k, why)
					}
				}
				if files := len(pageFiles(b.t, filepath.Join(b.dir, "out"))); int64(files) < st.Done {
					b.t.Errorf("%d page files for %d pages done", files, st.Done)
				}
			},
		},
		{
			// S3 unreachable mid-crawl: the saves that cannot be flushed are
			// not completed; they are retried and land when S3 is back.
			name: "saver/S3 down",
			run: func(b *bench) testbin.Result {
				s3srv := s3test.Start(b.t)
				s3srv.CreateBucket(b.t, "pages")
				s3srv.SetEnv(b.t)
				px := startProxy(b.t, strings.TrimPrefix(s3srv.Endpoint, "http://"))
				site := fixturesite.Start(b.t, fixturesite.Options{Pages: 150, Latency: 20 * time.Millisecond})
				cfg := b.config("crawl: s3down",
					fmt.Sprintf("tracker: {kind: memory, state: %q, batch: 8, max_attempts: 30, backoff: {base: 100ms, max: 500ms}}", filepath.Join(b.dir, "state", "crawl.state")),
					linkScraper(site.URL()+"/"), "fetch: {concurrency: 4, per_host_concurrency: 4}",
					fmt.Sprintf("saver: {kind: s3, bucket: pages, endpoint: %q, region: %q, path_style: true}", "http://"+px.Addr(), s3test.Region))
				p := b.cmd.Start(b.t, "crawl", "-c", cfg)
				testbin.WaitFor(b.t, time.Minute, "30 pages fetched", func() bool { return site.Total() >= 30 || p.Exited() })
				if p.Exited() {
					b.t.Fatalf("the crawl finished before the outage: %s", p.Wait(b.t, time.Second))
				}
				px.Down()
				time.Sleep(2 * time.Second)
				px.Up()
				r := p.Wait(b.t, 2*time.Minute)
				keys := listBucket(b, s3srv.Client(), "pages")
				if len(keys) != len(site.Pages()) {
					b.t.Errorf("%d objects in the bucket, want one per page (%d)", len(keys), len(site.Pages()))
				}
				return r
			},
			want: []string{"crawl done"},
			check: func(b *bench, r testbin.Result) {
				st := b.settled(b.dir + "/crawl.yaml")
				if st.Failed != 0 {
					b.t.Errorf("tracker %+v: want every page done after S3 came back:\n%s", st, r.Stderr)
				}
			},
		},
	}
}

// mountTmpfs mounts a tmpfs of size on dir for the test, which needs root;
// without it the row is skipped, saying why.
func mountTmpfs(b *bench, dir, size string) {
	b.t.Helper()
	if os.Geteuid() != 0 {
		b.t.Skip("disk full needs a small tmpfs, and mounting one needs root (CI runs as root)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		b.t.Fatalf("mount tmpfs on %s as root: %v\n%s", dir, err, out)
	}
	b.t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			b.t.Errorf("umount %s: %v\n%s", dir, err, out)
		}
	})
}

func listBucket(b *bench, c *s3.Client, bucket string) []string {
	b.t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(b.t.Context())
		if err != nil {
			b.t.Fatalf("list %s: %v", bucket, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys
}
