package filesaver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
)

// readCaptures reads the copies the manifest line l names, each beside
// its page.
func readCaptures(t testing.TB, dir string, l manifestLine) []saver.Capture {
	t.Helper()
	var out []saver.Capture
	for kind, p := range l.Captures {
		if want := filesaver.CapturePath(l.Path, kind); p != want {
			t.Fatalf("key %q: capture %s at %s, want beside the page at %s", l.Key, kind, p, want)
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			t.Fatalf("key %q: capture %s: %v", l.Key, kind, err)
		}
		out = append(out, saver.Capture{Kind: kind, ContentType: saver.CaptureType(kind), Data: data})
	}
	return out
}

// lastCaptures counts the copies named by the last manifest line of each
// key, checking each is on the disk.
func lastCaptures(t testing.TB, dir string) int {
	t.Helper()
	last := map[string]manifestLine{}
	for _, l := range readManifest(t, dir) {
		if !l.Unchanged {
			last[l.Key] = l
		}
	}
	n := 0
	for _, l := range last {
		n += len(readCaptures(t, dir, l))
	}
	return n
}

// TestCapturePathLongName checks that a copy of a page whose file name is
// as long as a name may be is still saved beside it, under a shortened
// name that ends in its extension.
func TestCapturePathLongName(t *testing.T) {
	base := strings.Repeat("n", 255)
	for _, kind := range saver.CaptureKinds {
		p := filesaver.CapturePath("h/d/"+base, kind)
		dir, name := filepath.Split(p)
		if dir != "h/d/" || len(name) > 255 || !strings.HasSuffix(name, saver.CaptureSuffix(kind)) {
			t.Fatalf("CapturePath(%s) = %q (name of %d bytes)", kind, p, len(name))
		}
	}
	if p := filesaver.CapturePath("h/a", "png"); p != "" {
		t.Fatalf("CapturePath of an unknown kind = %q, want \"\"", p)
	}
}
