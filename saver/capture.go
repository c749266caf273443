package saver

import (
	"fmt"
	"mime"
)

// The kinds of Capture, and the content type each is stored with.
const (
	CapturePDF        = "pdf"        // print to PDF: application/pdf
	CaptureScreenshot = "screenshot" // full-page PNG: image/png
)

// CaptureKinds lists the capture kinds in the order savers store them.
var CaptureKinds = []string{CapturePDF, CaptureScreenshot}

// captureType and captureExt are each kind's content type and extension.
var (
	captureType = map[string]string{CapturePDF: "application/pdf", CaptureScreenshot: "image/png"}
	captureExt  = map[string]string{CapturePDF: "pdf", CaptureScreenshot: "png"}
)

// CaptureType is the content type a capture of kind is stored with, ""
// for an unknown kind.
func CaptureType(kind string) string { return captureType[kind] }

// CaptureSuffix is what a capture's name adds to its page's name in a
// store that keeps it beside the page (file, tar, Redis, S3): "%.pdf",
// "%.png"; "" for an unknown kind. A raw "%" not followed by two hex
// digits is in no page's name (every templated value and every mirror
// path escapes "%"), so a capture never takes the name of a page, and
// the name still ends in the extension a viewer opens.
func CaptureSuffix(kind string) string {
	if ext, ok := captureExt[kind]; ok {
		return "%." + ext
	}
	return ""
}

// checkCaptures refuses captures a reader could not tell apart or open:
// an unknown kind, a kind twice, no data, a content type that is not the
// kind's.
func checkCaptures(p *Page) error {
	seen := map[string]bool{}
	for i, c := range p.Captures {
		want, ok := captureType[c.Kind]
		switch {
		case !ok:
			return fmt.Errorf("page %q: capture %d has kind %q (want %q or %q): %w", p.Key, i, c.Kind, CapturePDF, CaptureScreenshot, ErrInvalidPage)
		case seen[c.Kind]:
			return fmt.Errorf("page %q: two captures of kind %q: %w", p.Key, c.Kind, ErrInvalidPage)
		case len(c.Data) == 0:
			return fmt.Errorf("page %q: capture %q is empty: %w", p.Key, c.Kind, ErrInvalidPage)
		case c.ContentType != "" && !sameType(c.ContentType, want):
			return fmt.Errorf("page %q: capture %q has content type %q, want %q: %w", p.Key, c.Kind, c.ContentType, want, ErrInvalidPage)
		}
		seen[c.Kind] = true
	}
	return nil
}

func sameType(got, want string) bool {
	t, _, err := mime.ParseMediaType(got)
	return err == nil && t == want
}
