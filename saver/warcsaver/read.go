package warcsaver

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// Walk reads back the pages of WARC files: path is a .warc or .warc.gz
// file (one gzip member per record, or one stream) or a directory of them
// (not its subdirectories), read in name order. Each response record is a
// page (but the redirects and failures marked FieldRole): its key is the
// record's Distscrape-Key (the target URI in a WARC
// another tool wrote), its body the HTTP payload with the Content-Encoding
// and chunking undone, its header the response's. The newest response of
// each key is passed to fn (see saver.Walked); revisit, request and
// metadata records are left out.
//
// A file that ends in a truncated or corrupt record is read up to its last
// complete record, the other files still read, and Walk then returns an
// error wrapping saver.ErrDamaged that names each such file.
func Walk(ctx context.Context, path string, fn saver.WalkFunc) (saver.Walked, error) {
	var w saver.Walked
	files, err := warcFiles(path, &w)
	if err != nil {
		return w, err
	}
	// The first pass finds the newest copy of each key (and where each file
	// stops being readable), the second passes those on.
	latest := storekit.NewLatest()
	readable := make([]int, len(files))
	var damaged []error
	pos := 0
	for i, name := range files {
		n, err := scanFile(ctx, name, -1, func(r *warcRecord) error {
			typ := r.pageType()
			if typ == "response" {
				latest.See(r.key(), r.date(), pos)
			}
			if typ == "response" || typ == "revisit" {
				pos++
			}
			return nil
		})
		readable[i] = n
		if errors.Is(err, saver.ErrDamaged) {
			damaged = append(damaged, err)
		} else if err != nil {
			return w, err
		}
	}
	pos = 0
	for i, name := range files {
		_, err := scanFile(ctx, name, readable[i], func(r *warcRecord) error {
			typ := r.pageType()
			if typ != "response" && typ != "revisit" {
				return nil
			}
			at := pos
			pos++
			if typ == "revisit" || !latest.Wins(r.key(), at) {
				w.Skipped++
				return nil
			}
			if r.block == nil && r.size > 0 {
				w.Refuse(r.key(), storekit.ErrTooLarge(r.size).Error())
				return nil
			}
			p, warn, refused := r.page()
			if reason, ok := storekit.Refusal(refused); ok {
				w.Refuse(r.key(), reason)
				return nil
			}
			if warn != "" {
				w.Warnings = append(w.Warnings, fmt.Sprintf("%s: %s", filepath.Base(name), warn))
			}
			w.Pages++
			return fn(p)
		})
		if err != nil && !errors.Is(err, saver.ErrDamaged) {
			return w, err
		}
	}
	if len(damaged) > 0 {
		return w, errors.Join(damaged...)
	}
	return w, nil
}

// IsWARC reports whether name is a WARC file's name.
func IsWARC(name string) bool {
	l := strings.ToLower(name)
	return strings.HasSuffix(l, ".warc") || strings.HasSuffix(l, ".warc.gz")
}

// warcFiles lists the WARC files at path, a file or a directory; in a
// directory, one that is no regular file (a symlink, a FIFO) is refused.
func warcFiles(path string, w *saver.Walked) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	if !st.IsDir() {
		if !IsWARC(path) {
			return nil, fmt.Errorf("warc: %s is not a .warc or .warc.gz file: %w", path, saver.ErrNotStore)
		}
		return []string{path}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	var files []string
	for _, e := range ents {
		switch {
		case !IsWARC(e.Name()):
		case e.Type().IsRegular():
			files = append(files, filepath.Join(path, e.Name()))
		default:
			w.Refuse(e.Name(), "no regular file (a symlink, a FIFO), not read")
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("warc: %s holds no .warc or .warc.gz file: %w", path, saver.ErrNotStore)
	}
	sort.Strings(files)
	return files, nil
}

// warcRecord is one record as read: its header and block.
type warcRecord struct {
	header textproto.MIMEHeader
	block  []byte // nil when size is over maxBlock: skipped, not read
	size   int64
}

// maxBlock bounds the block read of one record: a page's body
// (saver.MaxWalkBody) and its HTTP header.
const maxBlock = saver.MaxWalkBody + 1<<20

func (r *warcRecord) typ() string { return r.header.Get("WARC-Type") }

// pageType is the record's WARC-Type, but "" for a response that is no
// page: a redirect on the way to one or the response an item failed with,
// which the WARC saver archives beside the pages (FieldRole).
func (r *warcRecord) pageType() string {
	if r.header.Get(FieldRole) != "" {
		return ""
	}
	return r.typ()
}

func (r *warcRecord) key() string {
	if k := r.header.Get(FieldKey); k != "" {
		return storekit.UnMetaValue(k)
	}
	return r.header.Get("WARC-Target-URI")
}

func (r *warcRecord) date() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, r.header.Get("WARC-Date"))
	return t
}

// scanFile calls fn with each record of the file, the first limit of them
// when limit >= 0, and returns how many it read whole. A file that does
// not read to its end is an error wrapping saver.ErrDamaged. In a gzip
// file a record is passed on once its member's checksum has been checked
// (or the next record of the same member has been read).
func scanFile(ctx context.Context, name string, limit int, fn func(*warcRecord) error) (int, error) {
	f, err := storekit.OpenRegular(name)
	if err != nil {
		return 0, fmt.Errorf("warc: %w", err)
	}
	defer f.Close()
	fc := &countReader{r: f}
	br := bufio.NewReaderSize(fc, 64<<10)
	n := 0
	damaged := func(at int64, what string, err error) (int, error) {
		return n, fmt.Errorf("warc: %s: record %d (%s at byte %d) is incomplete or corrupt: %v; read the %d records before it: %w",
			name, n+1, what, at, err, n, saver.ErrDamaged)
	}
	each := func(rd *bufio.Reader, at func() int64, what string, member bool) (bool, error) {
		for limit < 0 || n < limit {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			start := at()
			r, err := readRecord(rd)
			if err == io.EOF {
				return true, nil
			}
			if err != nil {
				_, err = damaged(start, what, err)
				return false, err
			}
			if member { // the member's end checks its checksum
				if _, err := rd.Peek(1); err != nil && err != io.EOF {
					_, err = damaged(start, what, err)
					return false, err
				}
			}
			if err := fn(r); err != nil {
				return false, err
			}
			n++
		}
		return false, nil
	}
	if magic, _ := br.Peek(2); len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		_, err := each(br, func() int64 { return fc.n - int64(br.Buffered()) }, "plain", false)
		return n, err
	}
	var zr *gzip.Reader
	rd := bufio.NewReaderSize(nil, 64<<10)
	for limit < 0 || n < limit {
		start := fc.n - int64(br.Buffered())
		if zr == nil {
			zr, err = gzip.NewReader(br)
		} else {
			err = zr.Reset(br)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return damaged(start, "gzip member", err)
		}
		zr.Multistream(false)
		rd.Reset(zr)
		more, err := each(rd, func() int64 { return start }, "gzip member", true)
		if err != nil || !more {
			return n, err
		}
	}
	return n, nil
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readRecord reads one record: io.EOF at the clean end of the data.
func readRecord(rd *bufio.Reader) (*warcRecord, error) {
	if _, err := rd.Peek(1); err == io.EOF {
		return nil, io.EOF
	}
	head, err := peekHeader(rd)
	if err != nil {
		if b, _ := rd.Peek(min(rd.Buffered(), 64)); !bytes.HasPrefix(b, []byte("WARC/")) {
			return nil, fmt.Errorf("starts with %.20q, not a WARC version line", b)
		}
		return nil, err
	}
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	version, err := tp.ReadLine()
	if err != nil {
		return nil, unexpected(err)
	}
	if !strings.HasPrefix(version, "WARC/") {
		return nil, fmt.Errorf("starts with %.20q, not a WARC version line", version)
	}
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, unexpected(err)
	}
	if _, err := rd.Discard(len(head)); err != nil {
		return nil, unexpected(err)
	}
	size, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
	if err != nil || size < 0 {
		return nil, fmt.Errorf("Content-Length %q", h.Get("Content-Length"))
	}
	if size > 1<<40 {
		return nil, fmt.Errorf("Content-Length %d is beyond any page", size)
	}
	r := &warcRecord{header: h, size: size}
	if size > maxBlock {
		// Read past it in the reader's buffer, never whole.
		if n, err := rd.Discard(int(size)); err != nil {
			return nil, fmt.Errorf("block of %d bytes, %d read: %w", size, n, unexpected(err))
		}
	} else {
		r.block = make([]byte, size)
		if _, err := io.ReadFull(rd, r.block); err != nil {
			return nil, fmt.Errorf("block of %d bytes: %w", size, unexpected(err))
		}
	}
	var end [4]byte
	if _, err := io.ReadFull(rd, end[:]); err != nil {
		return nil, fmt.Errorf("record end: %w", unexpected(err))
	}
	if string(end[:]) != "\r\n\r\n" {
		return nil, fmt.Errorf("block not followed by CRLF CRLF")
	}
	return r, nil
}

// peekHeader returns a record's WARC header, up to its blank line, without
// consuming it: at most the reader's buffer (64 KiB), so a header line
// without end cannot grow without bound.
func peekHeader(rd *bufio.Reader) ([]byte, error) {
	buf, err := rd.Peek(rd.Size())
	end := -1
	if i := bytes.Index(buf, []byte("\r\n\r\n")); i >= 0 {
		end = i + 4
	}
	if i := bytes.Index(buf, []byte("\n\n")); i >= 0 && (end < 0 || i+2 < end) {
		end = i + 2
	}
	switch {
	case end >= 0:
		return buf[:end], nil
	case len(buf) == rd.Size():
		return nil, fmt.Errorf("WARC header longer than %d bytes", rd.Size())
	case err != nil:
		return nil, unexpected(err)
	}
	return nil, io.ErrUnexpectedEOF
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// page makes a response record a page; warn says what could not be undone,
// refused why the page is not read (a body over saver.MaxWalkBody once
// decoded).
func (r *warcRecord) page() (_ *saver.Page, warn string, refused error) {
	p := &saver.Page{Key: r.key(), URL: r.header.Get("WARC-Target-URI"), FetchedAt: r.date(),
		RemoteAddr: r.header.Get("WARC-IP-Address")}
	if l := r.header.Get(FieldLabels); l != "" {
		p.Labels = saver.SplitLabels(storekit.UnMetaValue(l))
	}
	p.Visit, _ = strconv.Atoi(r.header.Get(FieldVisit))
	head, payload, ok := bytes.Cut(r.block, []byte("\r\n\r\n"))
	if !ok {
		return p, fmt.Sprintf("response of %s: no HTTP header in its block", p.URL), nil
	}
	resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(bytes.NewReader(head), strings.NewReader("\r\n\r\n"))), nil)
	if err != nil {
		return p, fmt.Sprintf("response of %s: %v", p.URL, err), nil
	}
	resp.Body.Close()
	p.Status, p.Proto, p.Header = resp.StatusCode, resp.Proto, resp.Header
	p.Reason = strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)+" ")
	p.ContentType = resp.Header.Get("Content-Type")
	if len(resp.TransferEncoding) > 0 && resp.TransferEncoding[0] == "chunked" {
		if b, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(payload))); err == nil {
			payload = b
		} else {
			warn = fmt.Sprintf("response of %s: chunked payload: %v; kept as stored", p.URL, err)
		}
	}
	p.Body = payload
	if enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc != "" && enc != "identity" {
		if b, err := decodeBody(enc, payload); err == nil {
			p.Body, p.WireBody = b, payload
		} else if errors.Is(err, saver.ErrRefused) {
			return p, "", err
		} else {
			warn = fmt.Sprintf("response of %s: Content-Encoding %s: %v; body kept as stored", p.URL, enc, err)
		}
	}
	// Headers the saver renamed because the stored payload is decoded.
	for name, vs := range resp.Header {
		if orig, ok := strings.CutPrefix(name, warcOrigPrefix); ok && p.Header.Get(orig) == "" {
			p.Header[http.CanonicalHeaderKey(orig)] = vs
			delete(p.Header, name)
		}
	}
	return p, warn, nil
}

// decodeBody undoes a Content-Encoding.
func decodeBody(enc string, b []byte) ([]byte, error) {
	var rd io.Reader
	switch enc {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		rd = zr
	case "br":
		rd = brotli.NewReader(bytes.NewReader(b))
	case "zstd":
		zd, err := zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			return nil, err
		}
		defer zd.Close()
		rd = zd
	case "deflate": // zlib-wrapped as RFC 9110 says, or raw as some servers send
		if zr, err := zlib.NewReader(bytes.NewReader(b)); err == nil {
			rd = zr
		} else {
			rd = flate.NewReader(bytes.NewReader(b))
		}
	default:
		return nil, fmt.Errorf("unknown encoding")
	}
	return storekit.ReadCapped(rd)
}
