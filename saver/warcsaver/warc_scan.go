package warcsaver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"strconv"
	"strings"
)

// scanned is what a scan tells of one record: its WARC header fields, the
// place of its gzip member, and for an HTTP response its status line,
// Content-Type and the first bytes of its payload.
type scanned struct {
	typ, id, concurrentTo, uri, date, digest string
	refersTo                                 string // a revisit's WARC-Refers-To-Target-URI
	offset, length                           int64  // of the gzip member
	status                                   int
	mime                                     string
	encoded                                  bool   // the payload has a Content-Encoding
	head                                     []byte // the payload's first bytes (scan's want)
}

// countingReader counts the bytes the gzip reader takes; being a
// flate.Reader (ReadByte), it is read exactly to each member's end.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// errDamaged says a scan stopped at bytes that are no complete record.
var errDamaged = errors.New("damaged record")

// scan reads the records of a .warc.gz stream, one gzip member each, and
// calls fn for each complete one, keeping up to want bytes of an HTTP
// response's payload. It returns the length of the whole records that end
// a group: a request and the response naming it (WARC-Concurrent-To)
// are one group, so a cut never separates a pair. err is errDamaged
// (wrapped) when the stream goes on past that point with something that
// is not a whole record or group, nil when it ends there.
func scan(r io.Reader, want int, fn func(*scanned) error) (int64, error) {
	cr := &countingReader{r: bufio.NewReaderSize(r, 64<<10)}
	var zr gzip.Reader
	var good int64
	pending := map[string]bool{} // responses named by a request, not yet read
	for {
		start := cr.n
		if err := zr.Reset(cr); err != nil {
			if err == io.EOF && start == cr.n && start > 0 {
				if len(pending) > 0 {
					return good, fmt.Errorf("%w: a request without its response at the end", errDamaged)
				}
				return good, nil
			}
			return good, fmt.Errorf("%w: gzip header at %d: %v", errDamaged, start, err)
		}
		zr.Multistream(false)
		rec, err := readScanned(&zr, want)
		if err != nil {
			return good, fmt.Errorf("%w: record at %d: %v", errDamaged, start, err)
		}
		rec.offset, rec.length = start, cr.n-start
		switch {
		case rec.typ == "request" && rec.concurrentTo != "":
			pending[rec.concurrentTo] = true
		case pending[rec.id]:
			delete(pending, rec.id)
		}
		if fn != nil {
			if err := fn(rec); err != nil {
				return good, err
			}
		}
		if len(pending) == 0 {
			good = cr.n
		}
	}
}

// readScanned reads one record from a gzip member to its end, checking
// that its block is Content-Length bytes and two CRLFs.
func readScanned(zr io.Reader, want int) (*scanned, error) {
	br := bufio.NewReader(zr)
	tp := textproto.NewReader(br)
	version, err := tp.ReadLine()
	if err != nil || !strings.HasPrefix(version, "WARC/") {
		return nil, fmt.Errorf("no WARC version line (%q, %v)", version, err)
	}
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, fmt.Errorf("header: %v", err)
	}
	size, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
	if err != nil || size < 0 {
		return nil, fmt.Errorf("Content-Length %q", h.Get("Content-Length"))
	}
	rec := &scanned{typ: h.Get("Warc-Type"), id: h.Get("Warc-Record-Id"), concurrentTo: h.Get("Warc-Concurrent-To"),
		uri: h.Get("Warc-Target-Uri"), date: h.Get("Warc-Date"), digest: h.Get("Warc-Payload-Digest"),
		refersTo: h.Get("Warc-Refers-To-Target-Uri")}
	lim := &io.LimitedReader{R: br, N: size}
	var block io.Reader = lim
	if (rec.typ == "response" || rec.typ == "revisit") && strings.HasPrefix(h.Get("Content-Type"), "application/http") {
		hb := bufio.NewReader(block)
		htp := textproto.NewReader(hb)
		line, err := htp.ReadLine()
		if err == nil {
			if _, code, ok := strings.Cut(line, " "); ok {
				code, _, _ = strings.Cut(code, " ")
				rec.status, _ = strconv.Atoi(code)
			}
			if hh, err := htp.ReadMIMEHeader(); err == nil {
				rec.mime = hh.Get("Content-Type")
				enc := strings.TrimSpace(hh.Get("Content-Encoding"))
				rec.encoded = enc != "" && !strings.EqualFold(enc, "identity")
			}
		}
		if want > 0 {
			rec.head, _ = io.ReadAll(io.LimitReader(hb, int64(want)))
		}
		block = hb // what is left of the block, buffered or not
	}
	if _, err := io.Copy(io.Discard, block); err != nil {
		return nil, err
	}
	if lim.N != 0 {
		return nil, fmt.Errorf("block %d bytes shorter than its Content-Length", lim.N)
	}
	// Then CRLF CRLF and the member's end (io.EOF, not a torn trailer's
	// io.ErrUnexpectedEOF), which checks its CRC and size.
	var tail [4]byte
	if _, err := io.ReadFull(br, tail[:]); err != nil || !bytes.Equal(tail[:], []byte("\r\n\r\n")) {
		return nil, fmt.Errorf("block not followed by CRLF CRLF (%v)", err)
	}
	if n, err := br.Read(tail[:1]); n != 0 || err != io.EOF {
		return nil, fmt.Errorf("no clean end of the gzip member after the record (%v)", err)
	}
	return rec, nil
}
