package saver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/tracker"
)

// badWorkers are the ways a worker name can try to leave its folder, its
// key or its log line; every saver refuses each of them before touching
// anything.
var badWorkers = []string{"..", ".", "a/b", `a\b`, "-x", ".hidden", "a\x00b", "a\nb", "wörker", "{crawl}", "a b", strings.Repeat("w", 200)}

func TestSaversRefuseBadWorker(t *testing.T) {
	ctx := context.Background()
	constructors := map[string]func(dir, worker string) error{
		"file": func(dir, w string) error {
			_, err := saver.NewFile(saver.FileConfig{Dir: filepath.Join(dir, "out"), Crawl: "c", Worker: w})
			return err
		},
		"tar": func(dir, w string) error {
			_, err := saver.NewTar(saver.TarConfig{Path: filepath.Join(dir, "out", "{crawl}-{worker}.tar"), Crawl: "c", Worker: w})
			return err
		},
		// The name is checked before any connection: no server is needed.
		"redis": func(_, w string) error {
			_, err := saver.NewRedis(ctx, saver.RedisConfig{URL: "redis://127.0.0.1:1/0", Crawl: "c", Worker: w})
			return err
		},
		"s3": func(_, w string) error {
			_, err := saver.NewS3(ctx, saver.S3Config{Bucket: "b", Endpoint: "http://127.0.0.1:1", PathStyle: true, Crawl: "c", Worker: w})
			return err
		},
	}
	for kind, open := range constructors {
		for _, w := range badWorkers {
			dir := t.TempDir()
			err := open(dir, w)
			if !errors.Is(err, tracker.ErrBadWorker) || !errors.Is(err, saver.ErrConfig) {
				t.Errorf("%s saver, worker %q: %v, want ErrBadWorker and ErrConfig", kind, w, err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("%s saver, worker %q: created %v before refusing", kind, w, entries)
			}
		}
	}
}

// TestFileWorkerKeepsOthersTemp: a worker never touches another worker's
// temporary directory or manifest (the name "." once cleaned them all).
func TestFileWorkerKeepsOthersTemp(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, saver.MetaDir, "tmp", "other", "in-flight")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{".", "..", "a..b", "w"} {
		if s, err := saver.NewFile(saver.FileConfig{Dir: dir, Crawl: "c", Worker: w}); err == nil {
			s.Close(context.Background())
		}
		if _, err := os.Stat(other); err != nil {
			t.Fatalf("worker %q removed another worker's temporary file: %v", w, err)
		}
	}
}
