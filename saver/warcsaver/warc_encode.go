package warcsaver

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/nlnwa/gowarc"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// hopPage is a redirect of p as a page of its own, for encode.
func hopPage(p *saver.Page, h *saver.Exchange) *saver.Page {
	return &saver.Page{Key: p.Key, Labels: p.Labels, Visit: p.Visit, Failed: true,
		URL: h.URL, Status: h.Status, ContentType: h.ContentType, FetchedAt: h.FetchedAt, Body: h.Body,
		Method: h.Method, RequestHeader: h.RequestHeader, Proto: h.Proto, Reason: h.Reason,
		Header: h.Header, RemoteAddr: h.RemoteAddr, WireBody: h.WireBody}
}

// encode appends p's two records to buf, each compressed as a gzip
// member, and returns the index entry of the response, its offset
// relative to buf. A failed page (or a redirect) is never a revisit of
// identical payload: it is no version of the page.
// role is FieldRole's value: "redirect", "failed", or "" for a page.
func (w *Saver) encode(buf *bytes.Buffer, p *saver.Page, role string) (cdxEntry, error) {
	target, err := targetURI(p)
	if err != nil {
		return cdxEntry{}, err
	}
	ex := newExchange(p, target)
	reqID, err := newRecordID()
	if err != nil {
		return cdxEntry{}, err
	}
	respID, err := newRecordID()
	if err != nil {
		return cdxEntry{}, err
	}
	date, uri, ip, key := warcDate(p.FetchedAt), target.String(), remoteIP(p.RemoteAddr), storekit.MetaValue(p.Key)
	entry := cdxEntry{id: respID, uri: uri, date: date, digest: warcDigest(ex.payload), status: p.Status, mime: p.ContentType}
	common := [][2]string{{gowarc.WarcTargetURI, uri}, {gowarc.WarcDate, date}, {gowarc.WarcIPAddress, ip}, {FieldKey, key},
		{FieldLabels, storekit.MetaValue(saver.JoinLabels(p.Labels))}, {FieldVisit, storekit.Visit(p.Visit)}, {FieldRole, role}}
	respFields := append([][2]string{{gowarc.WarcRecordID, respID}, {gowarc.ContentType, "application/http;msgtype=response"},
		{gowarc.WarcConcurrentTo, reqID}, {gowarc.WarcPayloadDigest, entry.digest}}, common...)
	typ, block := gowarc.Response, [][]byte{ex.response, ex.payload}
	switch {
	case p.Unchanged:
		// A 304: the body is in an earlier response of this URI. Its date
		// and ID are known when this saver wrote it (a revisit record
		// may leave them out: WARC 1.1, 6.7.2).
		// The index line carries the original's payload digest, by which
		// an index user resolves the revisit; unknown ("") when another
		// worker wrote the response.
		w.mu.Lock()
		last := w.last[uri]
		w.mu.Unlock()
		ref := &gowarc.RevisitRef{Profile: gowarc.ProfileServerNotModifiedV1_1, TargetRecordId: last.id,
			TargetUri: uri, TargetDate: last.date}
		typ, block, entry.revisitOf, entry.digest = gowarc.Revisit, block[:1], ref, last.digest
		respFields[3][1] = "" // no payload, so no payload digest
		respFields = append(respFields, [][2]string{{gowarc.WarcProfile, ref.Profile}, {gowarc.WarcRefersTo, ref.TargetRecordId},
			{gowarc.WarcRefersToTargetURI, ref.TargetUri}, {gowarc.WarcRefersToDate, ref.TargetDate}}...)
	case w.cfg.Revisits && !p.Failed:
		w.mu.Lock()
		ref := w.seen[entry.digest]
		w.mu.Unlock()
		if ref != nil {
			// The payload is in an earlier response: say where, keep the headers.
			typ, block, entry.revisitOf = gowarc.Revisit, block[:1], ref
			respFields = append(respFields, [][2]string{{gowarc.WarcProfile, ref.Profile}, {gowarc.WarcRefersTo, ref.TargetRecordId},
				{gowarc.WarcRefersToTargetURI, ref.TargetUri}, {gowarc.WarcRefersToDate, ref.TargetDate}}...)
		}
	}
	rec, err := buildRecord(w.opts, typ, respFields, block...)
	if err != nil {
		return cdxEntry{}, err
	}
	defer rec.Close()
	req, err := buildRecord(w.opts, gowarc.Request, append([][2]string{{gowarc.WarcRecordID, reqID},
		{gowarc.ContentType, "application/http;msgtype=request"}, {gowarc.WarcConcurrentTo, respID},
		{gowarc.WarcPayloadDigest, warcDigest(nil)}}, common...), ex.request)
	if err != nil {
		return cdxEntry{}, err
	}
	defer req.Close()
	start := buf.Len()
	if err := compressRecord(buf, req); err != nil {
		buf.Truncate(start)
		return cdxEntry{}, err
	}
	entry.offset = int64(buf.Len()) // relative to buf, until written
	if err := compressRecord(buf, rec); err != nil {
		buf.Truncate(start)
		return cdxEntry{}, err
	}
	entry.length = int64(buf.Len()) - entry.offset
	if role == "" { // a page's copies; a redirect or a failure has none
		if err := w.encodeCaptures(buf, p, respID, uri, date, key); err != nil {
			buf.Truncate(start)
			return cdxEntry{}, err
		}
	}
	return entry, nil
}

var (
	// One gzip member per record pays the block setup twice a page, where a
	// tar.gz stream pays it once per 64 KB: at BestSpeed a page costs ~155 µs
	// of CPU against tar.gz's ~110 µs (~65 µs more at the default level),
	// and a WARC file is ~8% larger than at the default level (4.4 against
	// 4.1 KB a page of the benchmark).
	gzipPool = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed); return w }}
	bufPool  = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	marshal  = gowarc.NewMarshaler()
)

func getBuf() *bytes.Buffer { b := bufPool.Get().(*bytes.Buffer); b.Reset(); return b }

func putBuf(b *bytes.Buffer) {
	if b.Cap() <= 4<<20 {
		bufPool.Put(b)
	}
}

// copyPool holds the buffers through which records are copied into gzip.
var copyPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// pooledCopy gives a writer a ReadFrom that copies through a pooled buffer:
// the marshaler's io.Copy otherwise allocates 32 KB per record, most of a
// page's allocations.
type pooledCopy struct{ io.Writer }

func (w pooledCopy) ReadFrom(r io.Reader) (int64, error) {
	buf := copyPool.Get().(*[]byte)
	defer copyPool.Put(buf)
	return io.CopyBuffer(w.Writer, r, *buf)
}

// compressRecord appends rec to buf as one gzip member.
func compressRecord(buf *bytes.Buffer, rec gowarc.WarcRecord) error {
	zw := gzipPool.Get().(*gzip.Writer)
	defer gzipPool.Put(zw)
	zw.Reset(buf)
	if _, _, err := marshal.Marshal(pooledCopy{zw}, rec, 0); err != nil {
		return fmt.Errorf("write %s record: %w", rec.Type(), err)
	}
	return zw.Close()
}
