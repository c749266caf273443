package s3saver_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/distscrape/distscrape/internal/testkit/s3test"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/s3saver"
	"github.com/distscrape/distscrape/saver/savertest"
)

func unMeta(v string) string {
	if strings.HasPrefix(v, "=?UTF-8?B?") && strings.HasSuffix(v, "?=") {
		if b, err := base64.StdEncoding.DecodeString(v[10 : len(v)-2]); err == nil {
			return string(b)
		}
	}
	return v
}

// s3Reader reads a bucket with its own client: every object, its
// metadata (or metadata object) and its body.
type s3Reader struct {
	c      *s3.Client
	bucket string
}

func (r *s3Reader) list(t testing.TB) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(r.c, &s3.ListObjectsV2Input{Bucket: aws.String(r.bucket)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list %s: %v", r.bucket, err)
		}
		for _, o := range out.Contents {
			if !strings.HasSuffix(*o.Key, s3saver.SidecarSuffix) && !strings.Contains(*o.Key, s3saver.VersionSuffix) && !s3saver.IsCaptureKey(*o.Key) {
				keys = append(keys, *o.Key)
			}
		}
	}
	return keys
}

func (r *s3Reader) head(t testing.TB, key string) savertest.Stored {
	t.Helper()
	ctx := context.Background()
	h, err := r.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(r.bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("head %q: %v", key, err)
	}
	m := h.Metadata
	st := savertest.Stored{Key: unMeta(m[s3saver.MetaKey]), URL: unMeta(m[s3saver.MetaURL]), ContentType: aws.ToString(h.ContentType)}
	st.Status, _ = strconv.Atoi(m[s3saver.MetaStatus])
	st.FetchedAt, _ = time.Parse(time.RFC3339Nano, m[s3saver.MetaFetched])
	st.Header = savertest.MetaHeader(func(name string) string { return unMeta(m[s3saver.MetaHeaderPrefix+name]) })
	st.Labels = saver.SplitLabels(unMeta(m[s3saver.MetaLabels]))
	st.Visit, _ = strconv.Atoi(m[s3saver.MetaVisit])
	if side := m[s3saver.MetaSidecar]; side != "" {
		var meta struct {
			KeyBytes []byte            `json:"key_bytes"`
			URL      string            `json:"url"`
			Headers  map[string]string `json:"headers"`
			Labels   []string          `json:"labels"`
		}
		if err := json.Unmarshal(r.get(t, unMeta(side)), &meta); err != nil {
			t.Fatalf("metadata object of %q: %v", key, err)
		}
		st.Key, st.URL, st.Labels = string(meta.KeyBytes), meta.URL, meta.Labels
		st.Header = savertest.MetaHeader(func(name string) string { return meta.Headers[name] })
	}
	return st
}

func (r *s3Reader) get(t testing.TB, key string) []byte {
	t.Helper()
	out, err := r.c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(r.bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return b
}

func s3Target(srv *s3test.Server, n *atomic.Int32) savertest.Factory {
	return func(t *testing.T) *savertest.Target {
		bucket := fmt.Sprintf("pages-%d", n.Add(1))
		srv.CreateBucket(t, bucket)
		s, err := s3saver.New(context.Background(), s3saver.Config{Bucket: bucket, Endpoint: srv.Endpoint, PathStyle: true,
			Prefix: "crawls/", Key: "{crawl}/{host}/{id}", Crawl: "test", Worker: "w1", KeepVersions: 3})
		if err != nil {
			t.Fatal(err)
		}
		r := &s3Reader{c: srv.Client(), bucket: bucket}
		return &savertest.Target{
			Saver: s,
			ReadAll: func(t testing.TB) []savertest.Stored {
				var out []savertest.Stored
				for _, k := range r.list(t) {
					st := r.head(t, k)
					st.Body = r.get(t, k)
					st.Captures = r.captures(t, k)
					out = append(out, st)
				}
				return out
			},
			Count: func(t testing.TB) int { return len(r.list(t)) },
			Versions: func(t testing.TB, key string) []savertest.Stored {
				return r.versions(t, s.Key(savertest.NewPage(key, nil)))
			},
			KeepVersions: 3,
		}
	}
}

// versions reads the earlier versions of the object key, oldest first.
func (r *s3Reader) versions(t testing.TB, key string) []savertest.Stored {
	t.Helper()
	out, err := r.c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(r.bucket),
		Prefix: aws.String(key + s3saver.VersionSuffix)})
	if err != nil {
		t.Fatal(err)
	}
	var vs []savertest.Stored
	for _, o := range out.Contents { // listed in key order: oldest first
		if strings.HasSuffix(*o.Key, s3saver.SidecarSuffix) {
			continue
		}
		st := r.head(t, *o.Key)
		st.Body = r.get(t, *o.Key)
		vs = append(vs, st)
	}
	return vs
}

func TestS3Object(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	srv.SetEnv(t)
	srv.CreateBucket(t, "pages")
	s, err := s3saver.New(ctx, s3saver.Config{Bucket: "pages", Endpoint: srv.Endpoint, PathStyle: true, Crawl: "c"})
	if err != nil {
		t.Fatal(err)
	}
	p := savertest.NewPage("https://example.org/ünï", []byte("<p>x</p>"))
	if err := s.Save(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	sha := sha256.Sum256([]byte(p.Key))
	key := "c/" + hex.EncodeToString(sha[:]) // the default template
	h, err := srv.Client().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("pages"), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("head %s: %v", key, err)
	}
	if ct := aws.ToString(h.ContentType); ct != p.ContentType {
		t.Errorf("Content-Type %q, want %q", ct, p.ContentType)
	}
	if got := unMeta(h.Metadata[s3saver.MetaKey]); got != p.Key {
		t.Errorf("metadata key %q, want %q", got, p.Key)
	}
}

func TestS3BadBucketAndCredentials(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := s3test.Start(t)
	srv.CreateBucket(t, "exists")
	cfg := s3saver.Config{Bucket: "no-such-bucket", Endpoint: srv.Endpoint, PathStyle: true}

	srv.SetEnv(t)
	_, err := s3saver.New(ctx, cfg)
	if !errors.Is(err, saver.ErrBucketNotFound) || !strings.Contains(err.Error(), `"no-such-bucket"`) {
		t.Errorf("missing bucket: %v, want ErrBucketNotFound naming the bucket", err)
	}

	const wrongSecret = "wrong-secret-do-not-print-42"
	s3test.SetEnvCredentials(t, s3test.AccessKey, wrongSecret)
	cfg.Bucket = "exists"
	_, err = s3saver.New(ctx, cfg)
	if !errors.Is(err, saver.ErrAccessDenied) || !strings.Contains(err.Error(), `"exists"`) {
		t.Errorf("wrong secret: %v, want ErrAccessDenied naming the bucket", err)
	}
	if err != nil && strings.Contains(err.Error(), wrongSecret) {
		t.Errorf("the error prints the secret: %v", err)
	}

	s3test.SetEnvCredentials(t, "", "")
	_, err = s3saver.New(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("no credentials: %v, want an error saying how to set them", err)
	}

	for _, c := range []s3saver.Config{{}, {Bucket: "pages", Key: "{nope}"}} {
		if _, err := s3saver.New(ctx, c); err == nil {
			t.Errorf("New(%+v) = nil error", c)
		}
	}
}

// TestS3Throttling puts a proxy in front of versitygw that answers the
// first PUTs with 503 SlowDown, as S3 does: the saver retries and Flush
// succeeds.
func TestS3Throttling(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := s3test.Start(t)
	srv.SetEnv(t)
	srv.CreateBucket(t, "pages")
	var throttled atomic.Int32
	s := faultyS3(ctx, t, srv, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPut || throttled.Add(1) > 2 {
			return false
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
		return true
	})
	if err := s.Save(ctx, savertest.NewPage("page1", []byte("throttled at first"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush after throttling: %v", err)
	}
	if n := throttled.Load(); n < 3 {
		t.Fatalf("%d PUTs reached the proxy, want the 2 throttled ones and a retry", n)
	}
	if b := (&s3Reader{c: srv.Client(), bucket: "pages"}).get(t, "page1"); string(b) != "throttled at first" {
		t.Fatalf("object = %q", b)
	}
}

// TestS3FailedUploadRetriedByNextFlush: an upload that fails (S3 down)
// makes Flush fail, and is uploaded by a later Flush once S3 is back.
func TestS3FailedUploadRetriedByNextFlush(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := s3test.Start(t)
	srv.SetEnv(t)
	srv.CreateBucket(t, "pages")
	var down atomic.Bool
	s := faultyS3(ctx, t, srv, func(w http.ResponseWriter, r *http.Request) bool {
		if !down.Load() {
			return false
		}
		w.WriteHeader(http.StatusForbidden) // not retryable: fails at once
		io.WriteString(w, `<Error><Code>AccessDenied</Code><Message>down</Message></Error>`)
		return true
	})
	down.Store(true)
	if err := s.Save(ctx, savertest.NewPage("kept", []byte("kept"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err == nil {
		t.Fatal("Flush with S3 refusing = nil, want an error")
	}
	down.Store(false)
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush after recovery: %v", err)
	}
	if b := (&s3Reader{c: srv.Client(), bucket: "pages"}).get(t, "kept"); string(b) != "kept" {
		t.Fatalf("object = %q", b)
	}
}

// faultyS3 returns an S3 saver (bucket "pages", key {id}) that reaches srv
// through a proxy; fault answers a request itself when it returns true.
func faultyS3(ctx context.Context, t *testing.T, srv *s3test.Server, fault func(http.ResponseWriter, *http.Request) bool) *s3saver.Saver {
	t.Helper()
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the signature covers the Host header
	}}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !fault(w, r) {
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(front.Close)
	s, err := s3saver.New(ctx, s3saver.Config{Bucket: "pages", Endpoint: front.URL, PathStyle: true, Key: "{id}"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return s
}
