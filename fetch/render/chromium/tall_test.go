package chromium

import (
	"bytes"
	"image/png"
	"strconv"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/fetch/render"
	"github.com/distscrape/distscrape/test/fixturesite"
)

// TestRenderTallPage: a page far taller than a screenshot can be keeps
// its body; its screenshot is clipped to MaxScreenshotHeight (the top of
// the page, at the viewport's width). A page that fits is taken whole
// (the control).
func TestRenderTallPage(t *testing.T) {
	tb := setup(t, nil)
	for _, c := range []struct {
		h       int
		clipped bool
	}{{2000, false}, {300000, true}} {
		p, err := tb.render(t, fixturesite.JSTallPath+"?h="+strconv.Itoa(c.h), render.Rule{Capture: []render.Kind{render.Screenshot}})
		if err != nil {
			t.Fatalf("h=%d: %v", c.h, err)
		}
		if !strings.Contains(string(p.Response.Body), fixturesite.JSTallText) {
			t.Errorf("h=%d: the body lost its end:\n%.300s", c.h, p.Response.Body)
		}
		if len(p.Captures) != 1 {
			t.Fatalf("h=%d: %d captures, want the screenshot", c.h, len(p.Captures))
		}
		img, err := png.DecodeConfig(bytes.NewReader(p.Captures[0].Data))
		if err != nil {
			t.Fatalf("h=%d: the screenshot is no PNG: %v", c.h, err)
		}
		want := c.h + 16 // the page's last line under its block
		if c.clipped {
			want = MaxScreenshotHeight
		}
		if img.Width != 900 || (c.clipped && img.Height != want) || (!c.clipped && img.Height < c.h) {
			t.Errorf("h=%d: screenshot %dx%d, want 900 wide and %d tall", c.h, img.Width, img.Height, want)
		}
	}
}
