package s3test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestStart: a real versitygw stores an object as a file of its directory.
func TestStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := Start(t)
	s.CreateBucket(t, "pages")
	c := s.Client()
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("pages"), Key: aws.String("a/b.html"),
		Body: bytes.NewReader([]byte("hello"))}); err != nil {
		t.Fatal(err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("pages"), Key: aws.String("a/b.html")})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	if b, _ := io.ReadAll(out.Body); string(b) != "hello" {
		t.Fatalf("GetObject = %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, "pages", "a", "b.html")); err != nil || string(b) != "hello" {
		t.Fatalf("backend file = %q, %v", b, err)
	}
}
