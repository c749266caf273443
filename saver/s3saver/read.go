package s3saver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/naming"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// Walk reads back the pages of a crawl that the S3 saver stored: cfg's
// Bucket, Prefix, Key template, Crawl and connection settings say where
// (Worker is not needed). It lists the objects under the longest prefix
// the template fixes (ListObjectsV2), leaves out the earlier versions
// (VersionSuffix) and metadata objects (SidecarSuffix), and gets each page
// with its metadata (or its metadata object). Objects without the saver's
// metadata are no page: skipped and counted.
func Walk(ctx context.Context, cfg Config, fn saver.WalkFunc) (saver.Walked, error) {
	var w saver.Walked
	if cfg.Bucket == "" {
		return w, storekit.ConfigErr("saver.bucket", "no bucket")
	}
	key := cfg.Key
	if key == "" {
		key = "{crawl}/{sha256}"
	}
	tmpl, err := naming.Parse("saver.key", key, saver.Placeholders)
	if err != nil {
		return w, err
	}
	prefix := cfg.Prefix + tmpl.Glob(cfg.Crawl, func(s string) string { return s })
	prefix, _, _ = strings.Cut(prefix, "*")
	prefix = strings.TrimLeft(prefix, "/")
	c, _, err := newClient(ctx, cfg)
	if err != nil {
		return w, err
	}
	pages := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(cfg.Bucket), Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return w, fmt.Errorf("s3 saver: list bucket %q under %q: %w", cfg.Bucket, prefix, err)
		}
		for _, o := range out.Contents {
			k := aws.ToString(o.Key)
			if IsCaptureKey(k) {
				continue // a page's copy, not a page
			}
			if strings.HasSuffix(k, SidecarSuffix) || strings.Contains(k, VersionSuffix) {
				w.Skipped++
				continue
			}
			p, err := getPage(ctx, c, cfg.Bucket, k)
			if err != nil {
				return w, err
			}
			if p == nil {
				w.Skipped++
				continue
			}
			w.Pages++
			if err := fn(p); err != nil {
				return w, err
			}
		}
	}
	return w, nil
}

// getPage reads the object k as a page; nil for an object that is none.
func getPage(ctx context.Context, c *s3.Client, bucket, k string) (*saver.Page, error) {
	get := func(k string) (*s3.GetObjectOutput, []byte, error) {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)})
		if err != nil {
			return nil, nil, fmt.Errorf("s3 saver: get %q: %w", k, err)
		}
		defer out.Body.Close()
		b, err := io.ReadAll(out.Body)
		if err != nil {
			return nil, nil, fmt.Errorf("s3 saver: get %q: %w", k, err)
		}
		return out, b, nil
	}
	out, body, err := get(k)
	if err != nil {
		return nil, err
	}
	m := out.Metadata
	if m[MetaKey] == "" && m[MetaSidecar] == "" {
		return nil, nil
	}
	p := &saver.Page{Key: storekit.UnMetaValue(m[MetaKey]), URL: storekit.UnMetaValue(m[MetaURL]),
		ContentType: aws.ToString(out.ContentType), Body: body, Header: http.Header{},
		Labels: saver.SplitLabels(storekit.UnMetaValue(m[MetaLabels]))}
	p.Status, _ = strconv.Atoi(m[MetaStatus])
	p.Visit, _ = strconv.Atoi(m[MetaVisit])
	p.FetchedAt, _ = time.Parse(time.RFC3339Nano, m[MetaFetched])
	for _, name := range saver.MetaHeaders {
		if v := m[MetaHeaderPrefix+strings.ToLower(name)]; v != "" {
			p.Header.Set(name, storekit.UnMetaValue(v))
		}
	}
	if side := m[MetaSidecar]; side != "" {
		_, b, err := get(storekit.UnMetaValue(side))
		if err != nil {
			return nil, err
		}
		var meta struct {
			KeyBytes    []byte            `json:"key_bytes"`
			URL         string            `json:"url"`
			ContentType string            `json:"content_type"`
			Headers     map[string]string `json:"headers"`
			Labels      []string          `json:"labels"`
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			return nil, fmt.Errorf("s3 saver: metadata object of %q: %w", k, err)
		}
		p.Key, p.URL, p.Labels, p.ContentType = string(meta.KeyBytes), meta.URL, meta.Labels, meta.ContentType
		for _, name := range saver.MetaHeaders {
			if v := meta.Headers[strings.ToLower(name)]; v != "" {
				p.Header.Set(name, v)
			}
		}
	}
	if p.ContentType != "" {
		p.Header.Set("Content-Type", p.ContentType)
	}
	return p, nil
}
