package s3saver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/s3saver"
)

// captures reads the copies the page object key lists in its metadata,
// each an object beside it with its kind's Content-Type.
func (r *s3Reader) captures(t testing.TB, key string) []saver.Capture {
	t.Helper()
	h, err := r.c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(r.bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("head %q: %v", key, err)
	}
	var out []saver.Capture
	for _, kind := range strings.Fields(h.Metadata[s3saver.MetaCaptures]) {
		ck := s3saver.CaptureKey(key, kind)
		ch, err := r.c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(r.bucket), Key: aws.String(ck)})
		if err != nil {
			t.Fatalf("%q lists a %s at %q: %v", key, kind, ck, err)
		}
		out = append(out, saver.Capture{Kind: kind, ContentType: aws.ToString(ch.ContentType), Data: r.get(t, ck)})
	}
	return out
}

// TestS3CaptureKeyLong checks that a copy of a page whose key is as long
// as a key may be still ends in its suffix, within S3's limits.
func TestS3CaptureKeyLong(t *testing.T) {
	for _, key := range []string{"p/" + strings.Repeat("n", 255), strings.Repeat("d/", 500) + "x"} {
		for _, kind := range saver.CaptureKinds {
			k := s3saver.CaptureKey(key, kind)
			last := k[strings.LastIndexByte(k, '/')+1:]
			if !strings.HasSuffix(k, saver.CaptureSuffix(kind)) || len(last) > 255 || len(k) > 1024 || !s3saver.IsCaptureKey(k) {
				t.Fatalf("CaptureKey(%d bytes, %s) = %d bytes, last element %d", len(key), kind, len(k), len(last))
			}
		}
	}
}
