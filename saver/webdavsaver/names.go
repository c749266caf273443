package webdavsaver

import (
	"net/url"
	"strings"
	"time"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/naming"
)

// A page at NAME (a name its template rendered, relative to the saver's
// URL) is three kinds of file in one collection: its body at NAME, each
// capture at NAME%.pdf / NAME%.png (saver.CaptureSuffix), and its metadata
// at NAME%.meta.json (MetaSuffix), written last: the metadata file is what
// makes NAME a page for a reader. A raw "%" not followed by two hex digits
// is in no page's name, so neither file ever takes a page's place.

// MetaSuffix ends the name of a page's metadata file.
const MetaSuffix = "%.meta.json"

// Meta is a page's metadata file, as JSON.
type Meta struct {
	// Name is the page's body, relative to the saver's URL; the metadata
	// file is MetaName(Name), in the same collection.
	Name string `json:"name"`
	// Key is the item; KeyBytes holds it exactly when it is not valid
	// UTF-8 (JSON would replace the bad bytes).
	Key         string    `json:"key"`
	KeyBytes    []byte    `json:"key_bytes,omitempty"`
	URL         string    `json:"url"`
	Status      int       `json:"status"`
	ContentType string    `json:"content_type"`
	Fetched     time.Time `json:"fetched"`
	// Headers are the page's saver.MetaHeaders, by lower-case name.
	Headers map[string]string `json:"headers,omitempty"`
	Labels  []string          `json:"labels,omitempty"`
	Visit   int               `json:"visit,omitempty"`
	// Captures names each capture's file by its kind ("pdf": NAME%.pdf).
	Captures map[string]string `json:"captures,omitempty"`
	// Size and SHA256 describe the body as saved, so a reader sees a body
	// replaced by a save cut short before its metadata.
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
}

// PageKey is the item the metadata describes.
func (m *Meta) PageKey() string {
	if m.KeyBytes != nil {
		return string(m.KeyBytes)
	}
	return m.Key
}

// MetaName is the name of the metadata file of the page at name.
func MetaName(name string) string { return beside(name, MetaSuffix) }

// CaptureName is the name of the capture of kind of the page at name; ""
// for an unknown kind.
func CaptureName(name, kind string) string {
	suffix := saver.CaptureSuffix(kind)
	if suffix == "" {
		return ""
	}
	return beside(name, suffix)
}

// beside is name plus suffix, in name's collection: the last element is
// shortened as a page's is when the suffix makes it longer than
// naming.MaxElem. The result still ends in suffix. (The whole may pass
// naming.MaxPathLen by the suffix: a file system's limit is far above it.)
func beside(name, suffix string) string {
	dir, last := "", name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		dir, last = name[:i+1], name[i+1:]
	}
	if len(last)+len(suffix) > naming.MaxElem {
		last = naming.Shorten(last, naming.MaxElem-len(suffix))
	}
	return dir + last + suffix
}

// isSideFile reports whether a file's name is a metadata file's or a
// capture's, not a page's.
func isSideFile(name string) bool {
	if strings.HasSuffix(name, MetaSuffix) {
		return true
	}
	for _, kind := range saver.CaptureKinds {
		if strings.HasSuffix(name, saver.CaptureSuffix(kind)) {
			return true
		}
	}
	return false
}

// escapePath escapes each element of a slash-separated path for a URL.
func escapePath(p string) string {
	elems := strings.Split(p, "/")
	for i, e := range elems {
		elems[i] = url.PathEscape(e)
	}
	return strings.Join(elems, "/")
}
