package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// acceptEncoding is what we decode; the transport's own gzip handling is off
// so that the size limit applies to the decoded body.
const acceptEncoding = "gzip, br, zstd, deflate"

// maxPooledBuf bounds the buffers kept for reuse.
const maxPooledBuf = 1 << 20

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

var (
	gzipPool   sync.Pool // *gzip.Reader
	brotliPool sync.Pool // *brotli.Reader
	zstdPool   sync.Pool // *zstd.Decoder
)

// tooLarge is the error for a body over limit bytes.
func tooLarge(limit int64) *Error {
	return &Error{reason: "body too large", final: true, Err: fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit)}
}

// readBody reads and decodes resp's body, stopping at limit decoded bytes:
// a body over the limit is an error and is never buffered in full, whatever
// its compression ratio.
// With truncate, the first limit bytes are returned instead of an error.
func readBody(resp *http.Response, limit int64, truncate bool) ([]byte, error) {
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if enc == "" || enc == "identity" {
		if resp.ContentLength > limit && !truncate {
			return nil, tooLarge(limit)
		}
		if resp.ContentLength >= 0 && resp.ContentLength <= limit {
			return readKnown(resp.Body, resp.ContentLength)
		}
		return readLimited(resp.Body, limit, truncate)
	}
	// The compressed stream is bounded too (a little above the limit, as
	// incompressible data grows slightly), so a stream of empty members
	// cannot run forever.
	raw := io.LimitReader(resp.Body, limit+limit/8+64<<10)
	switch enc {
	case "gzip", "x-gzip":
		zr, _ := gzipPool.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(raw)
		} else {
			err = zr.Reset(raw)
		}
		if err != nil {
			return nil, encodingError(enc, err)
		}
		defer gzipPool.Put(zr)
		return decode(zr, enc, limit, truncate)
	case "br":
		br, _ := brotliPool.Get().(*brotli.Reader)
		if br == nil {
			br = brotli.NewReader(raw)
		} else if err := br.Reset(raw); err != nil {
			return nil, encodingError(enc, err)
		}
		defer brotliPool.Put(br)
		return decode(br, enc, limit, truncate)
	case "zstd":
		zd, _ := zstdPool.Get().(*zstd.Decoder)
		var err error
		if zd == nil {
			zd, err = zstd.NewReader(raw, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(64<<20))
		} else {
			err = zd.Reset(raw)
		}
		if err != nil {
			return nil, encodingError(enc, err)
		}
		defer func() { _ = zd.Reset(nil); zstdPool.Put(zd) }()
		return decode(zd, enc, limit, truncate)
	case "deflate":
		// RFC 9110 says zlib-wrapped; some servers send raw deflate.
		var head [1]byte
		if _, err := io.ReadFull(raw, head[:]); err != nil {
			return nil, encodingError(enc, err)
		}
		src := io.MultiReader(bytes.NewReader(head[:]), raw)
		if head[0]&0x0f == 8 { // zlib's CM field: deflate
			zr, err := zlib.NewReader(src)
			if err != nil {
				return nil, encodingError(enc, err)
			}
			defer zr.Close()
			return decode(zr, enc, limit, truncate)
		}
		fr := flate.NewReader(src)
		defer fr.Close()
		return decode(fr, enc, limit, truncate)
	default:
		return nil, &Error{reason: "bad encoding", final: true,
			Err: fmt.Errorf("%w: unsupported Content-Encoding %q", ErrEncoding, enc)}
	}
}

// initialBodyCap is the most a body's buffer takes before its bytes
// arrive: a Content-Length is the server's word, and 16 responses each
// announcing 64 MiB while sending a byte per 100 ms took a worker to 1 GB.
const initialBodyCap = 64 << 10

// readKnown reads a body of announced length n (at most the limit), its
// buffer growing geometrically as bytes arrive, never past n. A body
// shorter than announced is io.ErrUnexpectedEOF.
func readKnown(r io.Reader, n int64) ([]byte, error) {
	buf := make([]byte, 0, min(n, initialBodyCap))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(n-int64(len(buf)), int64(cap(buf)))))
		}
		m, err := r.Read(buf[len(buf):int(min(int64(cap(buf)), n))])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			if int64(len(buf)) < n {
				return nil, io.ErrUnexpectedEOF
			}
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

func decode(r io.Reader, enc string, limit int64, truncate bool) ([]byte, error) {
	b, err := readLimited(r, limit, truncate)
	var fe *Error
	if err != nil && !errors.As(err, &fe) && !isTransportErr(err) {
		return nil, encodingError(enc, err)
	}
	return b, err
}

// isTransportErr tells a network failure under the decoder (classified as
// such by the caller) from corrupt compressed data.
func isTransportErr(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne)
}

func encodingError(enc string, err error) *Error {
	return &Error{reason: "bad encoding", Err: fmt.Errorf("%w: %s: %w", ErrEncoding, enc, err)}
}

// readLimited reads r to EOF through a pooled buffer, failing past limit,
// and returns a copy of exactly the bytes read.
func readLimited(r io.Reader, limit int64, truncate bool) ([]byte, error) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBuf {
			bufPool.Put(buf)
		}
	}()
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		if !truncate {
			return nil, tooLarge(limit)
		}
		buf.Truncate(int(limit))
	}
	return bytes.Clone(buf.Bytes()), nil
}
