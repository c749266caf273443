// Package s3saver uploads each page as an S3 object (AWS, or any
// S3-compatible store), with earlier versions of revisited pages.
package s3saver

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/naming"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// Config configures the S3 saver. Credentials come from the standard AWS
// chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE and the shared
// files, web identity, the instance's role.
type Config struct {
	Bucket string
	// Key is the object key template; default "{crawl}/{sha256}" ({sha256}
	// of the item key, so a re-save overwrites the same object).
	Key         string
	Prefix      string // prepended to every key as written ("pages/")
	Region      string // default us-east-1
	Endpoint    string // a custom endpoint URL (MinIO, versitygw, R2...)
	PathStyle   bool   // bucket in the path, not the host name
	Concurrency int    // uploads in flight; default 16
	Crawl       string
	Worker      string
	// KeepVersions is how many versions of a page are kept: the newest at
	// its key, earlier ones at KEY.distscrape-version-STAMP
	// (VersionSuffix); 0 means saver.DefaultKeepVersions, 1 the newest only.
	KeepVersions int
}

// Object metadata names (sent as x-amz-meta-*). A value that is not
// printable ASCII is stored as an RFC 2047 word, =?UTF-8?B?base64?=.
const (
	MetaKey     = "distscrape-key"
	MetaURL     = "distscrape-url"
	MetaStatus  = "distscrape-status"
	MetaFetched = "distscrape-fetched" // RFC 3339, nanoseconds
	MetaLabels  = "distscrape-labels"  // saver.JoinLabels; absent without labels
	MetaVisit   = "distscrape-visit"   // Page.Visit; absent on a first visit
	// MetaHeaderPrefix + the lower-case name of each of saver.MetaHeaders the page has.
	MetaHeaderPrefix = "distscrape-header-"
	// MetaSidecar names the object holding the page's metadata as JSON
	// (key, url, status, content_type, fetched, headers, labels, visit) when it exceeds S3's 2 KB of
	// user metadata (very long keys or URLs).
	MetaSidecar = "distscrape-meta-object"
	// SidecarSuffix ends the name of such a metadata object.
	SidecarSuffix = ".distscrape-meta.json"
)

const (
	s3MetaLimit    = 1900 // S3 allows 2 KB of user metadata; keep room for the names
	s3MaxRetryHeld = 256 << 20
)

// Saver uploads each page as one object, Concurrency at a time, with its
// Content-Type and metadata. Save returns once the upload has started;
// Flush waits for every upload started before it and returns an error if
// any failed. Failed uploads are kept and tried again by the next Flush, so
// a Flush that returns nil means every page saved before it is in the
// bucket. Throttling (SlowDown, 503) is retried with exponential backoff.
type Saver struct {
	c      *s3.Client
	bucket string
	prefix string
	tmpl   *naming.Template
	crawl  string
	worker string
	sem    chan struct{}
	keep   int
	ctx    context.Context // uploads outlive the Save that started them
	cancel context.CancelFunc

	mu        sync.Mutex
	batch     *s3Batch
	inflight  map[string]*s3Upload // the last upload started, by object key
	retry     map[string]*s3Upload // failed uploads, by object key
	retrySize int64
	seq       uint64
	closed    bool

	flushMu sync.Mutex
	waiting []*s3Batch // batches a cancelled Flush did not see finish; under flushMu
}

// s3Batch is the uploads started between two Flushes.
type s3Batch struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

// New loads the AWS configuration and checks that the bucket exists and
// the credentials may use it (HeadBucket).
func New(ctx context.Context, cfg Config) (*Saver, error) {
	if cfg.Bucket == "" {
		return nil, storekit.ConfigErr("saver.bucket", "no bucket")
	}
	key := cfg.Key
	if key == "" {
		key = "{crawl}/{sha256}"
	}
	tmpl, err := naming.Parse("saver.key", key, saver.Placeholders)
	if err != nil {
		return nil, err
	}
	if strings.ContainsAny(cfg.Prefix, "\x00\\") {
		return nil, storekit.ConfigErr("saver.prefix", "%q contains a NUL or a backslash", cfg.Prefix)
	}
	keep, err := storekit.KeepVersions(cfg.KeepVersions)
	if err != nil {
		return nil, err
	}
	client, awsCfg, err := newClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	conc := cfg.Concurrency
	if conc <= 0 {
		conc = 16
	}
	s := &Saver{c: client, bucket: cfg.Bucket, prefix: cfg.Prefix, tmpl: tmpl, crawl: cfg.Crawl, worker: cfg.Worker, keep: keep,
		sem: make(chan struct{}, conc), batch: &s3Batch{}, inflight: map[string]*s3Upload{}, retry: map[string]*s3Upload{}}
	if err := s.check(ctx, awsCfg, cfg.Endpoint); err != nil {
		return nil, err
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// newClient builds the S3 client of cfg (region, endpoint, path style)
// with the standard credential chain.
func newClient(ctx context.Context, cfg Config) (*s3.Client, aws.Config, error) {
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(region),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 8
				o.MaxBackoff = 20 * time.Second
				// A throttled crawl should slow down, not fail once a retry
				// quota is spent.
				o.RateLimiter = ratelimit.None
			})
		}))
	if err != nil {
		return nil, awsCfg, fmt.Errorf("s3 saver: load AWS configuration: %w", err)
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
	})
	return client, awsCfg, nil
}

func (s *Saver) check(ctx context.Context, awsCfg aws.Config, endpoint string) error {
	where := endpoint
	if where == "" {
		where = "region " + awsCfg.Region
	}
	creds, err := awsCfg.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("s3 saver: no AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE): %w", err)
	}
	_, err = s.c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.bucket)})
	if err == nil {
		return nil
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case 404:
			return fmt.Errorf("s3 saver: bucket %q does not exist at %s: %w", s.bucket, where, saver.ErrBucketNotFound)
		case 400, 401, 403:
			return fmt.Errorf("s3 saver: bucket %q at %s refused access key %s (HTTP %d): check the credentials and the bucket policy: %w",
				s.bucket, where, creds.AccessKeyID, re.HTTPStatusCode(), saver.ErrAccessDenied)
		}
	}
	return fmt.Errorf("s3 saver: bucket %q at %s: %w", s.bucket, where, err)
}

// Key returns the object key of p.
func (s *Saver) Key(p *saver.Page) string {
	k := s.tmpl.Render(naming.PageVars(p, s.crawl, s.worker))
	if s.prefix == "" {
		return k
	}
	return s.tmpl.CleanPath(s.prefix + k)
}

// Save starts the upload of p, waiting for a free slot first.
func (s *Saver) Save(ctx context.Context, p *saver.Page) error {
	if err := saver.CheckPage(p); err != nil {
		return err
	}
	if p.Unchanged || p.Failed {
		// A 304: no new body, the bucket holds the page already; a failed
		// page is no version of it.
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return saver.ErrClosed
		}
		return nil
	}
	key := s.Key(p)
	ctype := p.ContentType
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	meta := map[string]string{
		MetaKey:     storekit.MetaValue(p.Key),
		MetaURL:     storekit.MetaValue(p.URL),
		MetaStatus:  strconv.Itoa(p.Status),
		MetaFetched: p.FetchedAt.Format(time.RFC3339Nano),
	}
	if len(p.Labels) > 0 {
		meta[MetaLabels] = storekit.MetaValue(saver.JoinLabels(p.Labels))
	}
	if p.Visit > 0 {
		meta[MetaVisit] = strconv.Itoa(p.Visit)
	}
	hs := storekit.MetaHeaders(p)
	size := len(meta[MetaKey]) + len(meta[MetaURL]) + len(meta[MetaLabels])
	for name, v := range hs {
		meta[MetaHeaderPrefix+name] = storekit.MetaValue(v)
		size += len(MetaHeaderPrefix) + len(name) + len(meta[MetaHeaderPrefix+name])
	}
	var sidecar *s3.PutObjectInput
	if size > s3MetaLimit {
		side, err := s.sidecar(key, p)
		if err != nil {
			return err
		}
		sidecar = side
		delete(meta, MetaKey)
		delete(meta, MetaURL)
		delete(meta, MetaLabels)
		for name := range hs {
			delete(meta, MetaHeaderPrefix+name)
		}
		meta[MetaSidecar] = storekit.MetaValue(*side.Key)
	}
	captures, kinds := s.captureUploads(key, p)
	if kinds != "" {
		meta[MetaCaptures] = kinds
	}
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(bytes.Clone(p.Body)),
		ContentLength: aws.Int64(int64(len(p.Body))),
		ContentType:   aws.String(ctype),
		Metadata:      meta,
	}
	if p.Visit > 0 && s.keep > 1 {
		sum := md5.Sum(p.Body)
		if err := s.keepVersion(ctx, key, hex.EncodeToString(sum[:])); err != nil {
			return fmt.Errorf("s3 saver: save %q: keep the earlier version: %w", p.Key, err)
		}
	}
	// The metadata object and the copies go first: once the page is there,
	// so is what it points to.
	for _, up := range append(append(captures, sidecar), in) {
		if up == nil {
			continue
		}
		if err := s.start(ctx, up); err != nil {
			return fmt.Errorf("s3 saver: save %q: %w", p.Key, err)
		}
	}
	return nil
}

func (s *Saver) sidecar(key string, p *saver.Page) (*s3.PutObjectInput, error) {
	body, err := json.Marshal(map[string]any{"key": p.Key, "key_bytes": []byte(p.Key), "url": p.URL,
		"status": p.Status, "content_type": p.ContentType, "fetched": p.FetchedAt, "headers": storekit.MetaHeaders(p),
		"labels": p.Labels, "visit": p.Visit})
	if err != nil {
		return nil, fmt.Errorf("s3 saver: metadata of %q: %w", p.Key, err)
	}
	name := sidecarKey(key)
	return &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(name), Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))), ContentType: aws.String("application/json")}, nil
}

// s3Upload is one PutObject; seq orders the uploads of one object key.
type s3Upload struct {
	in   *s3.PutObjectInput
	seq  uint64
	done chan struct{} // closed when this upload has finished
}

// start runs one upload in the background, in the current batch. Uploads
// of one object key run in the order of their Saves, so the last Save wins.
func (s *Saver) start(ctx context.Context, in *s3.PutObjectInput) error {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.sem
		return saver.ErrClosed
	}
	if s.retrySize > s3MaxRetryHeld {
		s.mu.Unlock()
		<-s.sem
		return fmt.Errorf("%d bytes of failed uploads wait for S3; not starting more", s.retrySize)
	}
	s.seq++
	u := &s3Upload{in: in, seq: s.seq, done: make(chan struct{})}
	prev := s.inflight[*in.Key]
	s.inflight[*in.Key] = u
	b := s.batch
	b.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer func() { <-s.sem; b.wg.Done() }()
		if prev != nil {
			<-prev.done
		}
		err := s.put(u)
		s.mu.Lock()
		s.settle(u, err)
		if s.inflight[*in.Key] == u {
			delete(s.inflight, *in.Key)
		}
		s.mu.Unlock()
		close(u.done)
		if err != nil {
			b.mu.Lock()
			b.errs = append(b.errs, err)
			b.mu.Unlock()
		}
	}()
	return nil
}

// settle records how u ended: a failure is kept for the next Flush unless
// a newer copy of the object is kept; a success drops older failures.
func (s *Saver) settle(u *s3Upload, err error) {
	key := *u.in.Key
	cur := s.retry[key]
	if cur != nil && cur.seq > u.seq {
		return
	}
	if cur != nil {
		delete(s.retry, key)
		s.retrySize -= *cur.in.ContentLength
	}
	if err != nil {
		s.retry[key] = u
		s.retrySize += *u.in.ContentLength
	}
}

func (s *Saver) put(u *s3Upload) error {
	in := u.in
	in.Body.(*bytes.Reader).Seek(0, io.SeekStart) // a retried input is read again
	if _, err := s.c.PutObject(s.ctx, in); err != nil {
		return fmt.Errorf("put %q: %w", *in.Key, err)
	}
	return nil
}

// Flush waits for the uploads started before it, then tries the uploads
// that failed before again.
func (s *Saver) Flush(ctx context.Context) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return saver.ErrClosed
	}
	s.mu.Unlock()
	return s.flush(ctx)
}

func (s *Saver) flush(ctx context.Context) error {
	s.mu.Lock()
	s.waiting = append(s.waiting, s.batch)
	s.batch = &s3Batch{}
	s.mu.Unlock()
	var errs []error
	for len(s.waiting) > 0 {
		b := s.waiting[0]
		if err := wait(ctx, &b.wg); err != nil {
			return err // the batch stays in waiting for the next Flush
		}
		s.waiting = s.waiting[1:]
		errs = append(errs, b.errs...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("s3 saver: %d upload(s) failed: %w", len(errs), errors.Join(errs...))
	}
	// Failures kept by an earlier Flush: upload them again now.
	s.mu.Lock()
	again := make([]*s3Upload, 0, len(s.retry))
	for _, u := range s.retry {
		again = append(again, u)
	}
	s.mu.Unlock()
	for _, u := range again {
		s.mu.Lock()
		newer := s.inflight[*u.in.Key] != nil // it supersedes u, and settles it
		s.mu.Unlock()
		if newer {
			continue
		}
		err := s.put(u)
		s.mu.Lock()
		s.settle(u, err)
		s.mu.Unlock()
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("s3 saver: %d earlier upload(s) failed again: %w", len(errs), errors.Join(errs...))
	}
	return nil
}

func wait(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close waits for the uploads (retrying earlier failures, as Flush does) and stops.
func (s *Saver) Close(ctx context.Context) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err := s.flush(ctx)
	s.cancel()
	return err
}
