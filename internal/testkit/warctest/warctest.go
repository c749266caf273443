// Package warctest reads and validates .warc.gz files with a WARC library
// other than the one the saver writes with (github.com/internetarchive/gowarc
// reads, github.com/nlnwa/gowarc writes), and checks every record with code
// of its own, so a check never shares the writer's bugs: lengths, sha1
// base32 block and payload digests, record types, IDs, dates, addresses,
// target URIs, warcinfo first, request/response pairs linked by
// WARC-Concurrent-To, and conversion records referring to a response.
package warctest

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	warc "github.com/internetarchive/gowarc"
)

// Record is one record as read back.
type Record struct {
	File    string            // base name of its file
	Type    string            // WARC-Type
	Header  map[string]string // canonical names (Warc-Record-Id): use Get
	Block   []byte            // the content block
	Offset  int64             // of its gzip member in the file
	Size    int64             // of its gzip member
	Date    time.Time
	Payload []byte         // request and response records: the HTTP body as stored; conversion records: the block
	HTTP    *http.Response // response and revisit records: the status line and headers
}

// Get returns a WARC header field, whatever the case of name.
func (r Record) Get(name string) string { return r.Header[http.CanonicalHeaderKey(name)] }

// Digest is how WARC tools write a sha1 digest: "sha1:" and base32.
func Digest(b []byte) string {
	sum := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// ReadFile reads every record of a .warc.gz file and validates each. It
// returns the records read before the first problem and that problem: a
// truncated file reads up to its last complete record and then errs.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := warc.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var out []Record
	for i := 0; ; i++ {
		r, err := rd.ReadRecord()
		if errors.Is(err, io.EOF) && r == nil {
			break
		}
		if err != nil {
			return out, fmt.Errorf("%s: record %d: %w", filepath.Base(path), i, err)
		}
		rec, err := check(r, filepath.Base(path))
		r.Content.Close()
		if err != nil {
			return out, fmt.Errorf("%s: record %d (%s at %d): %w", filepath.Base(path), i, r.Header.Get("WARC-Type"), r.Offset, err)
		}
		if i == 0 && (rec.Type != "warcinfo" || rec.Get("WARC-Filename") != filepath.Base(path)) {
			return out, fmt.Errorf("%s: first record is %s for %q, want the file's warcinfo", path, rec.Type, rec.Get("WARC-Filename"))
		}
		out = append(out, rec)
	}
	return out, pairs(out)
}

func check(r *warc.Record, file string) (Record, error) {
	rec := Record{File: file, Type: r.Header.Get("WARC-Type"), Header: map[string]string{}, Offset: r.Offset, Size: r.Size}
	for k, v := range r.Header {
		rec.Header[http.CanonicalHeaderKey(k)] = v
	}
	if r.Version != "WARC/1.1" {
		return rec, fmt.Errorf("version %q, want WARC/1.1", r.Version)
	}
	if _, err := r.Content.Seek(0, io.SeekStart); err != nil {
		return rec, err
	}
	block, err := io.ReadAll(r.Content)
	if err != nil {
		return rec, err
	}
	rec.Block = block
	if got := rec.Get("Content-Length"); got != fmt.Sprint(len(block)) {
		return rec, fmt.Errorf("Content-Length %s, block of %d bytes", got, len(block))
	}
	if got, want := rec.Get("Warc-Block-Digest"), Digest(block); got != want {
		return rec, fmt.Errorf("WARC-Block-Digest %q, computed %q", got, want)
	}
	id := rec.Get("Warc-Record-Id")
	if !strings.HasPrefix(id, "<urn:uuid:") || !strings.HasSuffix(id, ">") {
		return rec, fmt.Errorf("WARC-Record-ID %q is not a <urn:uuid:...>", id)
	}
	if rec.Date, err = time.Parse(time.RFC3339Nano, rec.Get("Warc-Date")); err != nil {
		return rec, fmt.Errorf("WARC-Date: %w", err)
	}
	switch rec.Type {
	case "warcinfo":
		if rec.Get("Content-Type") != "application/warc-fields" || !bytes.Contains(block, []byte("software: ")) {
			return rec, fmt.Errorf("warcinfo block %q (%s)", block, rec.Get("Content-Type"))
		}
		return rec, nil
	case "conversion":
		return checkConversion(rec)
	case "request", "response", "revisit":
	default:
		return rec, fmt.Errorf("unexpected record type %q", rec.Type)
	}
	if u, err := url.Parse(rec.Get("Warc-Target-Uri")); err != nil || u.Host == "" {
		return rec, fmt.Errorf("WARC-Target-URI %q is not an absolute URL", rec.Get("Warc-Target-Uri"))
	}
	if ip := rec.Get("Warc-Ip-Address"); ip != "" && net.ParseIP(ip) == nil {
		return rec, fmt.Errorf("WARC-IP-Address %q is not an IP", ip)
	}
	head, payload, ok := bytes.Cut(block, []byte("\r\n\r\n"))
	if !ok {
		return rec, fmt.Errorf("HTTP block without the blank line after its headers")
	}
	if rec.Type == "request" {
		if _, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(block))); err != nil {
			return rec, fmt.Errorf("HTTP request block: %w", err)
		}
		if rec.Get("Content-Type") != "application/http;msgtype=request" {
			return rec, fmt.Errorf("request record of Content-Type %q", rec.Get("Content-Type"))
		}
	} else {
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(append(head, "\r\n\r\n"...))), nil)
		if err != nil {
			return rec, fmt.Errorf("HTTP response block: %w", err)
		}
		rec.HTTP = resp
		if rec.Get("Content-Type") != "application/http;msgtype=response" {
			return rec, fmt.Errorf("%s record of Content-Type %q", rec.Type, rec.Get("Content-Type"))
		}
	}
	if rec.Type == "revisit" {
		// identical-payload-digest names the record holding the payload and
		// its digest; server-not-modified (a 304) has no payload and may not
		// know the earlier record, only its URI (WARC 1.1, 6.7).
		profile := rec.Get("Warc-Profile")
		ok := len(payload) == 0 && rec.Get("Warc-Refers-To-Target-Uri") != ""
		switch {
		case strings.HasSuffix(profile, "/revisit/identical-payload-digest"):
			ok = ok && rec.Get("Warc-Refers-To") != "" && rec.Get("Warc-Payload-Digest") != ""
		case strings.HasSuffix(profile, "/revisit/server-not-modified"):
			ok = ok && rec.Get("Warc-Payload-Digest") == ""
		default:
			ok = false
		}
		if !ok {
			return rec, fmt.Errorf("revisit record incomplete: %v", rec.Header)
		}
		return rec, nil
	}
	rec.Payload = payload
	if got, want := rec.Get("Warc-Payload-Digest"), Digest(payload); got != want {
		return rec, fmt.Errorf("WARC-Payload-Digest %q, computed %q", got, want)
	}
	return rec, nil
}

// pairs checks that request and response (or revisit) records come in
// pairs for one URI, each naming the other in WARC-Concurrent-To.
func pairs(recs []Record) error {
	byID := map[string]Record{}
	for _, r := range recs {
		byID[r.Get("Warc-Record-Id")] = r
	}
	for _, r := range recs {
		if r.Type == "warcinfo" {
			continue
		}
		if r.Type == "conversion" {
			if err := checkRefersTo(r, byID); err != nil {
				return err
			}
			continue
		}
		other, ok := byID[r.Get("Warc-Concurrent-To")]
		if !ok {
			return fmt.Errorf("%s record %s: WARC-Concurrent-To %q names no record of the file", r.Type, r.Get("Warc-Record-Id"), r.Get("Warc-Concurrent-To"))
		}
		if (r.Type == "request") == (other.Type == "request") || other.Get("Warc-Concurrent-To") != r.Get("Warc-Record-Id") ||
			other.Get("Warc-Target-Uri") != r.Get("Warc-Target-Uri") {
			return fmt.Errorf("%s record %s and %s record %s are not a request/response pair of one URI", r.Type, r.Get("Warc-Record-Id"), other.Type, other.Get("Warc-Record-Id"))
		}
	}
	return nil
}

// ReadDir reads every .warc.gz file of dir in name order (timestamp, then
// sequence number) and returns all their records; it fails on the first
// file that does not validate.
func ReadDir(dir string) ([]Record, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil {
		return nil, err
	}
	var all []Record
	for _, f := range files {
		recs, err := ReadFile(f)
		if err != nil {
			return nil, err
		}
		all = append(all, recs...)
	}
	return all, nil
}
