package warcsaver

import (
	"bytes"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nlnwa/gowarc"
	"golang.org/x/net/http/httpguts"

	"github.com/distscrape/distscrape/internal/redact"
	"github.com/distscrape/distscrape/saver"
)

// WARC header fields of our own (extension fields, which readers ignore).
const (
	// FieldKey holds the item key on request, response and revisit
	// records, encoded as an S3 metadata value is (RFC 2047 when it is not
	// printable ASCII): an ID crawl's key is not its URL.
	FieldKey = "Distscrape-Key"
	// FieldLabels holds the item's labels (saver.JoinLabels, encoded as
	// FieldKey is) and FieldVisit its Page.Visit; each is absent
	// when empty or 0.
	FieldLabels = "Distscrape-Labels"
	FieldVisit  = "Distscrape-Visit"
	// FieldRole marks the request and response records that are no page
	// of the item they name: "redirect" (Page.Hops) or "failed"
	// (Page.Failed). A reader of pages (Walk) leaves them out.
	FieldRole = "Distscrape-Role"
)

// secretHeaders are request headers whose values a WARC never holds: the
// crawl's credentials (fetch.headers may carry a token or a session) are
// not the archived site's content.
var secretHeaders = map[string]bool{"Authorization": true, "Proxy-Authorization": true, "Cookie": true}

// Names the WARC saver writes in place of a response header that no longer
// describes the stored payload (a decoded body kept without its wire
// bytes), as the Wayback Machine does.
const warcOrigPrefix = "X-Archive-Orig-"

// warcRecordOptions make the library a record builder and writer only: we
// set the lengths and digests ourselves and the library checks none of
// the fields, which took about a third of a page's time (URL parsing, a
// second pass over each block); internal/testkit/warctest checks them instead,
// with another library. Large blocks spill to dir.
func warcRecordOptions(dir string) []gowarc.WarcRecordOption {
	return []gowarc.WarcRecordOption{
		gowarc.WithVersion(gowarc.V1_1),
		gowarc.WithNoValidation(),
		gowarc.WithRecordIdFunc(newRecordID),
		gowarc.WithBufferTmpDir(dir),
		gowarc.WithBufferMaxMemBytes(16 << 20),
	}
}

// uuidMu serializes gowarc.NewRecordBuilder, which turns uuid's random
// pool on at every call (a global write, a data race against any uuid.New
// running meanwhile), with the record IDs we draw.
var uuidMu sync.Mutex

// newRecordID is a WARC-Record-ID: a random UUID as a URN, in angle brackets.
func newRecordID() (string, error) {
	uuidMu.Lock()
	defer uuidMu.Unlock()
	id, err := uuid.NewRandom()
	if err != nil {
		return "", fmt.Errorf("record ID: %w", err)
	}
	return "<" + id.URN() + ">", nil
}

// warcDigest is the sha1 digest of the concatenated parts as WARC tools
// write it: "sha1:" and base32.
func warcDigest(parts ...[]byte) string {
	h := sha1.New()
	for _, p := range parts {
		h.Write(p)
	}
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(nil))
}

// warcDate is WARC 1.1's date with the fraction of a second kept, so the
// fetch time reads back exactly.
func warcDate(t time.Time) string {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// exchange is the HTTP request and response blocks of a page.
type exchange struct {
	request, response []byte // header bytes, up to and including the blank line
	payload           []byte // the response body as stored
}

// newExchange renders p's HTTP exchange as it went over the wire, as far
// as Go lets us see it (header names canonical, sorted; the request's as
// the transport writes them, see sentRequestHeader). A page without one
// (not fetched over HTTP) gets a minimal GET and 200.
func newExchange(p *saver.Page, target *url.URL) exchange {
	var ex exchange
	proto := p.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	method := p.Method
	if method == "" {
		method = http.MethodGet
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s %s\r\n", method, target.RequestURI(), proto)
	reqHeader := sentRequestHeader(p.RequestHeader, target, proto)
	writeHeader(&b, reqHeader)
	ex.request = bytes.Clone(b.Bytes())

	ex.payload = p.Body
	header := canonical(p.Header)
	if p.Header == nil {
		if p.ContentType != "" {
			header.Set("Content-Type", p.ContentType)
		}
	}
	if p.WireBody != nil {
		ex.payload = p.WireBody
	} else if enc := header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		rename(header, "Content-Encoding") // the body was decoded: say so, keep what the server said
	}
	if cl, ok := header["Content-Length"]; ok && (len(cl) != 1 || cl[0] != strconv.Itoa(len(ex.payload))) {
		rename(header, "Content-Length")
	}
	rename(header, "Transfer-Encoding") // the payload is stored de-chunked
	status := p.Status
	if status == 0 {
		status = http.StatusOK
	}
	reason := p.Reason
	if reason == "" {
		reason = http.StatusText(status)
	}
	b.Reset()
	fmt.Fprintf(&b, "%s %d %s\r\n", proto, status, oneLine(reason))
	writeHeader(&b, header)
	ex.response = bytes.Clone(b.Bytes())
	return ex
}

func rename(h http.Header, name string) {
	if v, ok := h[name]; ok {
		delete(h, name)
		h[warcOrigPrefix+name] = v
	}
}

// writeHeader writes h sorted by name, then the blank line; each value on
// one line and trimmed of spaces and tabs, as Go's transport writes it.
func writeHeader(b *bytes.Buffer, h http.Header) {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !httpguts.ValidHeaderFieldName(k) {
			continue // Go's parser yields none; a caller's page might
		}
		for _, v := range h[k] {
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(strings.Trim(oneLine(v), " \t"))
			b.WriteString("\r\n")
		}
	}
	b.WriteString("\r\n")
}

// oneLine makes s a valid header value or reason phrase: Go's parser never
// yields a control character there (CR and LF would end the line), but a
// library caller's page may.
func oneLine(s string) string {
	if httpguts.ValidHeaderFieldValue(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r != '\t' && (r < 0x20 || r == 0x7f) {
			return ' '
		}
		return r
	}, s)
}

// targetURI is p's URL as a WARC-Target-URI: parsed, so that what is not
// allowed in a URI (spaces, controls, non-ASCII) is percent-encoded, and
// without user or password.
func targetURI(p *saver.Page) (*url.URL, error) {
	u, err := url.Parse(p.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("url %q of %q is not an absolute http(s) URL: %w", redact.URL(p.URL), p.Key, saver.ErrInvalidPage)
	}
	u.User = nil // credentials are no part of the archived URI
	// A fragment is never sent; a query is sent as it is, so what a URI
	// cannot hold (Go's parser keeps spaces there) is percent-encoded.
	u.Fragment, u.RawFragment = "", ""
	u.RawQuery = escapeQuery(u.RawQuery)
	return u, nil
}

// escapeQuery percent-encodes the bytes of a raw query that a request line
// and a URI cannot hold, leaving valid escapes and the rest as they are.
func escapeQuery(q string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"<>\^`+"`"+`{|}`, c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// remoteIP is the IP of an IP:port (or a bare IP); "" when there is none.
func remoteIP(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.String()
	}
	return ""
}

// buildRecord builds one record of type typ with the given fields (those
// with a value) and block.
// The block digest and length are computed here.
func buildRecord(opts []gowarc.WarcRecordOption, typ gowarc.RecordType, fields [][2]string, block ...[]byte) (gowarc.WarcRecord, error) {
	uuidMu.Lock()
	rb := gowarc.NewRecordBuilder(typ, opts...)
	uuidMu.Unlock()
	for _, f := range fields {
		if f[1] != "" {
			rb.AddWarcHeader(f[0], f[1])
		}
	}
	size := 0
	for _, part := range block {
		size += len(part)
	}
	rb.AddWarcHeader(gowarc.WarcBlockDigest, warcDigest(block...))
	rb.AddWarcHeaderInt(gowarc.ContentLength, size)
	for _, part := range block {
		if _, err := rb.Write(part); err != nil {
			rb.Close()
			return nil, err
		}
	}
	rec, v, err := rb.Build()
	if err == nil && !v.Valid() {
		err = fmt.Errorf("%s record: %s", typ, v.String())
	}
	if err != nil {
		if rec != nil {
			rec.Close()
		}
		return nil, fmt.Errorf("build %s record: %w", typ, err)
	}
	return rec, nil
}

// warcinfoBlock is the warcinfo record's application/warc-fields block.
func warcinfoBlock(cfg Config) []byte {
	var b bytes.Buffer
	for _, f := range [][2]string{
		{"software", cfg.Software},
		{"format", "WARC File Format 1.1"},
		{"conformsTo", "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"},
		{"isPartOf", cfg.Crawl},
		{"distscrape-worker", cfg.Worker},
		{"distscrape-config-digest", cfg.ConfigDigest},
	} {
		if f[1] != "" {
			fmt.Fprintf(&b, "%s: %s\r\n", f[0], oneLine(f[1]))
		}
	}
	return b.Bytes()
}
