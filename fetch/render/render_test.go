package render

import (
	"errors"
	"testing"
)

// TestParseKind: every spelling a config may use for a kind, and words
// that name none.
func TestParseKind(t *testing.T) {
	for in, want := range map[string]Kind{"pdf": PDF, "PDF": PDF, " pdf ": PDF, "screenshot": Screenshot, "Screenshot": Screenshot, "png": Screenshot} {
		if k, err := ParseKind(in); err != nil || k != want {
			t.Errorf("%q: %q, %v; want %q", in, k, err, want)
		}
	}
	for _, in := range []string{"", "jpeg", "pdfs", "screen shot", "html"} {
		if _, err := ParseKind(in); !errors.Is(err, ErrKind) {
			t.Errorf("%q: %v, want ErrKind", in, err)
		}
	}
	if PDF.ContentType() != "application/pdf" || Screenshot.ContentType() != "image/png" {
		t.Error("content types")
	}
}
