package s3saver

import (
	"bytes"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/naming"
)

// MetaCaptures lists, space-separated, the kinds of the copies a rendered
// page has (saver.CaptureKinds): each is the object CaptureKey. Absent
// when the page has none. The page's metadata is what says which copies
// are its own: a later save of it without one of them leaves that
// object in place, no longer listed.
const MetaCaptures = "distscrape-captures"

// CaptureKey is the object key of the capture of kind of the page at key:
// beside it, key plus saver.CaptureSuffix (KEY%.pdf, KEY%.png), shortened
// as a page's key is when the suffix makes it too long; "" for an unknown
// kind.
func CaptureKey(key, kind string) string {
	suffix := saver.CaptureSuffix(kind)
	if suffix == "" {
		return ""
	}
	dir, last := "", key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		dir, last = key[:i+1], key[i+1:]
	}
	if len(last)+len(suffix) > naming.MaxElem {
		last = naming.Shorten(last, naming.MaxElem-len(suffix))
	}
	if len(dir)+len(last)+len(suffix) > naming.MaxPathLen {
		return naming.Shorten(dir+last, naming.MaxPathLen-len(suffix)) + suffix
	}
	return dir + last + suffix
}

// IsCaptureKey reports whether an object key is a capture's.
func IsCaptureKey(k string) bool {
	for _, kind := range saver.CaptureKinds {
		if strings.HasSuffix(k, saver.CaptureSuffix(kind)) {
			return true
		}
	}
	return false
}

// captureUploads returns the uploads of p's copies, beside the page at
// key, and the value of MetaCaptures ("" without copies).
func (s *Saver) captureUploads(key string, p *saver.Page) ([]*s3.PutObjectInput, string) {
	var ins []*s3.PutObjectInput
	var kinds []string
	for _, kind := range saver.CaptureKinds {
		for _, c := range p.Captures {
			if c.Kind != kind {
				continue
			}
			ins = append(ins, &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(CaptureKey(key, kind)),
				Body: bytes.NewReader(bytes.Clone(c.Data)), ContentLength: aws.Int64(int64(len(c.Data))),
				ContentType: aws.String(saver.CaptureType(kind))})
			kinds = append(kinds, kind)
		}
	}
	return ins, strings.Join(kinds, " ")
}
