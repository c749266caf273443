package warcsaver

import (
	"bytes"

	gowarc "github.com/nlnwa/gowarc"

	"github.com/distscrape/distscrape/saver"
)

// FieldCapture holds the kind of a conversion record's capture
// (saver.CapturePDF, saver.CaptureScreenshot).
const FieldCapture = "Distscrape-Capture"

// encodeCaptures appends a conversion record per capture of p to buf,
// each compressed as its own gzip member. A conversion record holds "an
// alternative version of another record's content ... created as the
// result of an archival process" (WARC 1.1, 6.8): the rendered page
// printed to PDF or drawn as PNG, whose source is the page's response,
// named by WARC-Refers-To. Its WARC-Target-URI is the page's URL, its
// Content-Type the capture's, its payload the whole block. A resource
// record would claim the URL served that document, which replay tools
// would then show in place of the page.
func (w *Saver) encodeCaptures(buf *bytes.Buffer, p *saver.Page, respID, uri, date, key string) error {
	for _, kind := range saver.CaptureKinds {
		for _, c := range p.Captures {
			if c.Kind != kind {
				continue
			}
			id, err := newRecordID()
			if err != nil {
				return err
			}
			digest := warcDigest(c.Data)
			rec, err := buildRecord(w.opts, gowarc.Conversion, [][2]string{{gowarc.WarcRecordID, id},
				{gowarc.ContentType, saver.CaptureType(kind)}, {gowarc.WarcTargetURI, uri}, {gowarc.WarcDate, date},
				{gowarc.WarcRefersTo, respID}, {gowarc.WarcPayloadDigest, digest}, {FieldKey, key}, {FieldCapture, kind}},
				c.Data)
			if err != nil {
				return err
			}
			err = compressRecord(buf, rec)
			rec.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}
