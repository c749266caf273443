package s3saver

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/naming"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// VersionSuffix follows an object key in the keys of its earlier
// versions: KEY.distscrape-version-STAMP, STAMP the version's fetch time
// (saver.VersionStamp), so a listing by the prefix KEY.distscrape-version- finds
// them oldest first. Each keeps its object's metadata.
const VersionSuffix = ".distscrape-version-"

// s3VersionPrefix is the prefix of key's version keys, shortened (with a
// hash, as every long name) so that a version key stays within S3's limit.
func s3VersionPrefix(key string) string {
	return naming.Shorten(key, naming.MaxPathLen-len(VersionSuffix)-len(saver.VersionStamp(time.Time{}))) + VersionSuffix
}

// sidecarKey is the key of the metadata object of the object key.
func sidecarKey(key string) string {
	dir, last := "", key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		dir, last = key[:i+1], key[i+1:]
	}
	return naming.Shorten(dir+naming.ShortenElem(last+SidecarSuffix), naming.MaxPathLen)
}

// copySource is bucket/key as CopyObject wants it: each element escaped.
func copySource(bucket, key string) string {
	elems := strings.Split(key, "/")
	for i, e := range elems {
		elems[i] = url.PathEscape(e)
	}
	return bucket + "/" + strings.Join(elems, "/")
}

// keepVersion copies the object at key, about to be replaced by a
// revisit's body (bodyMD5, hex), to its version key, metadata object
// included, then deletes the oldest versions beyond KeepVersions-1. Save
// calls it before it starts the new uploads, once the uploads of key it
// started before have finished; an error fails the Save, so the item is
// not completed and its retry copies again: the copy is named by the old
// object's fetch time, so a second copy overwrites the first. An object
// that already holds the new body (a retried save of the same visit, its
// ETag the body's MD5) is no earlier version.
func (s *Saver) keepVersion(ctx context.Context, key, bodyMD5 string) error {
	if err := s.settled(ctx, key, sidecarKey(key)); err != nil {
		return err
	}
	head, err := s.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == 404 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("head %q: %w", key, err)
	}
	if strings.Trim(aws.ToString(head.ETag), `"`) == bodyMD5 {
		return nil
	}
	fetched, err := time.Parse(time.RFC3339Nano, head.Metadata[MetaFetched])
	if err != nil {
		fetched = aws.ToTime(head.LastModified)
	}
	prefix := s3VersionPrefix(key)
	vkey := prefix + saver.VersionStamp(fetched)
	cp := &s3.CopyObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(vkey), CopySource: aws.String(copySource(s.bucket, key))}
	if side, ok := head.Metadata[MetaSidecar]; ok {
		// The version needs its own metadata object: the page's is replaced too.
		vside := sidecarKey(vkey)
		if _, err := s.c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(vside),
			CopySource: aws.String(copySource(s.bucket, storekit.UnMetaValue(side)))}); err != nil {
			return fmt.Errorf("copy metadata object of %q: %w", key, err)
		}
		meta := make(map[string]string, len(head.Metadata))
		for k, v := range head.Metadata {
			meta[k] = v
		}
		meta[MetaSidecar] = storekit.MetaValue(vside)
		cp.MetadataDirective, cp.Metadata, cp.ContentType = types.MetadataDirectiveReplace, meta, head.ContentType
	}
	if _, err := s.c.CopyObject(ctx, cp); err != nil {
		return fmt.Errorf("copy %q to %q: %w", key, vkey, err)
	}
	return s.prune(ctx, prefix)
}

// settled waits for the uploads of keys started so far.
func (s *Saver) settled(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		s.mu.Lock()
		u := s.inflight[k]
		s.mu.Unlock()
		if u == nil {
			continue
		}
		select {
		case <-u.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// prune deletes the oldest versions under prefix beyond KeepVersions-1.
func (s *Saver) prune(ctx context.Context, prefix string) error {
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.c, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list versions %q: %w", prefix, err)
		}
		for _, o := range out.Contents {
			k := aws.ToString(o.Key)
			if !strings.HasSuffix(k, SidecarSuffix) && !strings.Contains(k[len(prefix):], "/") {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	for len(keys) > s.keep-1 {
		for _, k := range []string{keys[0], sidecarKey(keys[0])} {
			if _, err := s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(k)}); err != nil {
				return fmt.Errorf("prune version %q: %w", k, err)
			}
		}
		keys = keys[1:]
	}
	return nil
}
