package tarsaver

import (
	"archive/tar"
	"path"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/naming"
)

// PAX records of a capture entry (a copy of a rendered page,
// saver.Capture): the key of the page it copies and its kind. It has no
// PAXKey, so no reader takes it for a page; it follows its page's entry.
const (
	PAXCaptureOf   = "SCHILY.xattr.user.distscrape.capture_of"
	PAXCaptureKind = "SCHILY.xattr.user.distscrape.capture_kind"
)

// CaptureName is the entry name of the capture of kind of the page whose
// entry is name: beside it, name plus saver.CaptureSuffix
// (h/d/index.html%.pdf), the last element shortened when the suffix makes
// it too long. "" for an unknown kind.
func CaptureName(name, kind string) string {
	suffix := saver.CaptureSuffix(kind)
	if suffix == "" {
		return ""
	}
	dir, base := path.Split(name)
	if len(base)+len(suffix) > naming.MaxElem {
		base = naming.Shorten(base, naming.MaxElem-len(suffix))
	}
	return dir + base + suffix
}

// captureHeaders are the entries of p's captures, to follow page, its
// entry: same time and fetch record, the kind's content type.
func captureHeaders(page *tar.Header, p *saver.Page) []*tar.Header {
	var out []*tar.Header
	for _, kind := range saver.CaptureKinds {
		for _, c := range p.Captures {
			if c.Kind != kind {
				continue
			}
			out = append(out, &tar.Header{
				Typeflag: tar.TypeReg,
				Name:     CaptureName(page.Name, kind),
				Size:     int64(len(c.Data)),
				Mode:     0o644,
				ModTime:  page.ModTime,
				Format:   tar.FormatPAX,
				PAXRecords: map[string]string{
					PAXCaptureOf:   p.Key,
					PAXCaptureKind: kind,
					PAXContentType: saver.CaptureType(kind),
					PAXFetched:     page.PAXRecords[PAXFetched],
				},
			})
		}
	}
	return out
}

// writeCaptures appends p's captures after its entry page.
func (t *Saver) writeCaptures(page *tar.Header, p *saver.Page) error {
	for _, h := range captureHeaders(page, p) {
		if err := t.tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := t.tw.Write(captureData(p, h.PAXRecords[PAXCaptureKind])); err != nil {
			return err
		}
	}
	return nil
}

func captureData(p *saver.Page, kind string) []byte {
	for _, c := range p.Captures {
		if c.Kind == kind {
			return c.Data
		}
	}
	return nil
}
