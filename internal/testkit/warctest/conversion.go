package warctest

import (
	"fmt"
	"mime"
	"net/url"
)

// checkConversion checks a conversion record (WARC 1.1, 6.8): an absolute
// WARC-Target-URI, a WARC-Refers-To naming its source record, a
// Content-Type that is a media type, and a payload digest, when given,
// of the whole block (its payload).
func checkConversion(rec Record) (Record, error) {
	if u, err := url.Parse(rec.Get("Warc-Target-Uri")); err != nil || u.Host == "" {
		return rec, fmt.Errorf("WARC-Target-URI %q is not an absolute URL", rec.Get("Warc-Target-Uri"))
	}
	if rec.Get("Warc-Refers-To") == "" {
		return rec, fmt.Errorf("conversion record without WARC-Refers-To")
	}
	if _, _, err := mime.ParseMediaType(rec.Get("Content-Type")); err != nil {
		return rec, fmt.Errorf("conversion record of Content-Type %q: %w", rec.Get("Content-Type"), err)
	}
	if got := rec.Get("Warc-Payload-Digest"); got != "" && got != Digest(rec.Block) {
		return rec, fmt.Errorf("WARC-Payload-Digest %q, computed %q", got, Digest(rec.Block))
	}
	rec.Payload = rec.Block
	return rec, nil
}

// checkRefersTo checks that a conversion record refers to a response of
// its file for the same URI.
func checkRefersTo(r Record, byID map[string]Record) error {
	src, ok := byID[r.Get("Warc-Refers-To")]
	if !ok || src.Type != "response" && src.Type != "revisit" || src.Get("Warc-Target-Uri") != r.Get("Warc-Target-Uri") {
		return fmt.Errorf("conversion record %s: WARC-Refers-To %q names no response of %s in the file",
			r.Get("Warc-Record-Id"), r.Get("Warc-Refers-To"), r.Get("Warc-Target-Uri"))
	}
	return nil
}
