package s3saver_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/distscrape/distscrape/internal/testkit/s3test"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/s3saver"
	"github.com/distscrape/distscrape/saver/savertest"
)

// TestWalk reads back what the saver wrote, with the contract's pages, a
// page whose metadata is too long for S3 (a metadata object), and objects
// of the same bucket that are none of the crawl's pages. It sets the
// process environment (the credentials), so it does not run in parallel.
func TestWalk(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	var n atomic.Int32
	cfgFor := func(t *testing.T) s3saver.Config {
		bucket := fmt.Sprintf("walk-%d", n.Add(1))
		srv.CreateBucket(t, bucket)
		return s3saver.Config{Bucket: bucket, Endpoint: srv.Endpoint, PathStyle: true, Prefix: "crawls/",
			Key: "{crawl}/{host}/{id}", Crawl: "c", Worker: "w1"}
	}
	t.Run("Contract", func(t *testing.T) {
		savertest.RunWalk(t, func(t *testing.T) *savertest.WalkTarget {
			cfg := cfgFor(t)
			s, err := s3saver.New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			return &savertest.WalkTarget{Saver: s, Walk: func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error) {
				return s3saver.Walk(ctx, cfg, fn)
			}}
		})
	})
	t.Run("SidecarAndScope", func(t *testing.T) {
		ctx := context.Background()
		cfg := cfgFor(t)
		s, err := s3saver.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		long := savertest.NewPage("http://example.test/"+strings.Repeat("long/", 500), []byte("long"))
		if err := s.Save(ctx, long); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"crawls/c/example.test/foreign", "crawls/other/x", "elsewhere"} {
			if _, err := srv.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(cfg.Bucket), Key: aws.String(k),
				Body: strings.NewReader("x")}); err != nil {
				t.Fatal(err)
			}
		}
		var got []*saver.Page
		w, err := s3saver.Walk(ctx, cfg, func(p *saver.Page) error { got = append(got, p); return nil })
		if err != nil || len(got) != 1 {
			t.Fatalf("Walk: %v, %d pages", err, len(got))
		}
		if got[0].Key != long.Key || got[0].URL != long.URL || string(got[0].Body) != "long" {
			t.Errorf("page %.60q %.60q %q, want the long page from its metadata object", got[0].Key, got[0].URL, got[0].Body)
		}
		// The metadata object and the foreign object under the prefix; the
		// others are outside the crawl's prefix and never listed.
		if w.Skipped != 2 {
			t.Errorf("Walked = %+v, want 2 skipped", w)
		}
	})
}
