package fetch

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// TestLyingContentLengthAllocatesAsBytesArrive: a response announcing 64
// MiB that sends a few bytes costs memory for those bytes, not for the
// announcement (16 such responses once took a worker to 1 GB).
func TestLyingContentLengthAllocatesAsBytesArrive(t *testing.T) {
	const announced = 64 << 20
	const runs = 8
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		resp := &http.Response{ContentLength: announced, Header: http.Header{},
			Body: io.NopCloser(iotest.OneByteReader(strings.NewReader("a few bytes")))}
		if _, err := readBody(resp, DefaultMaxBody, false); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("readBody: %v, want io.ErrUnexpectedEOF", err)
		}
	}
	runtime.ReadMemStats(&after)
	perResponse := (after.TotalAlloc - before.TotalAlloc) / runs
	if perResponse > 1<<20 {
		t.Fatalf("a response announcing %d bytes and sending 11 allocated %d bytes, want under 1 MiB", announced, perResponse)
	}
}

// TestReadKnown: honest bodies of every size around the growth steps read
// back exactly; short ones are io.ErrUnexpectedEOF.
func TestReadKnown(t *testing.T) {
	for _, n := range []int{0, 1, initialBodyCap - 1, initialBodyCap, initialBodyCap + 1, 3*initialBodyCap + 7, 1 << 20} {
		data := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		got, err := readKnown(iotest.HalfReader(bytes.NewReader(data)), int64(n))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("n=%d: %d bytes, %v", n, len(got), err)
		}
		if n > 0 {
			if _, err := readKnown(bytes.NewReader(data[:n-1]), int64(n)); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("n=%d, one byte short: %v, want io.ErrUnexpectedEOF", n, err)
			}
		}
	}
	// Bytes past the announced length are not read.
	got, err := readKnown(strings.NewReader("abcdef"), 3)
	if err != nil || string(got) != "abc" {
		t.Fatalf("got %q, %v", got, err)
	}
}
