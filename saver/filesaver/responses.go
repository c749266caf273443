package filesaver

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// RecordsResponses is true: each redirect on the way to a page and the
// response an item failed with are manifest lines ("kind": "redirect",
// "failed"), with no file.
func (f *Saver) RecordsResponses() bool { return true }

// responseLines are the manifest lines of p's redirects, in order, each
// ending in a newline.
func (f *Saver) responseLines(p *saver.Page) ([]byte, error) {
	var out []byte
	for i := range p.Hops {
		h := &p.Hops[i]
		rec := manifestRecord{Key: p.Key, URL: h.URL, Status: h.Status, ContentType: h.ContentType, Fetched: h.FetchedAt,
			Labels: p.Labels, Visit: p.Visit, Kind: "redirect", Location: h.Header.Get("Location")}
		rec.Path = f.Path(&saver.Page{Key: h.URL, URL: h.URL})
		rec.Headers = storekit.MetaHeaders(&saver.Page{Header: h.Header, ContentType: h.ContentType})
		if !utf8.ValidString(p.Key) {
			rec.KeyBytes = []byte(p.Key)
		}
		line, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("file saver: manifest record of %q, redirect %d: %w", p.Key, i, err)
		}
		out = append(append(out, line...), '\n')
	}
	return out, nil
}
