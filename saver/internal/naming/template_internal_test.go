package naming

import (
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
)

// TestFoldCase: on a case-insensitive file system, names that differ only
// in case must stay distinct.
func TestFoldCase(t *testing.T) {
	tm, err := Parse("saver.name", "{id}", saver.Placeholders)
	if err != nil {
		t.Fatal(err)
	}
	tm.FoldCase = true
	seen := map[string]string{}
	for _, k := range []string{"A", "a", "Index.HTML", "index.html", "%41", "ÄB", "äb"} {
		name := tm.Render(Vars{id: k})
		lower := strings.ToLower(name)
		if prev, ok := seen[lower]; ok {
			t.Errorf("keys %q and %q map to names equal but for case: %q", prev, k, name)
		}
		seen[lower] = k
	}
	if got := tm.Render(Vars{id: "Ab"}); got != "%41b" {
		t.Errorf("render(Ab) = %q, want %%41b", got)
	}
}

func TestShortenKeepsLimits(t *testing.T) {
	tm, _ := Parse("saver.name", "{crawl}/{path}", saver.Placeholders)
	long := strings.Repeat("é", 400) + ".html"
	name := tm.Render(Vars{crawl: "c", path: []string{long, strings.Repeat("b/", 600)}})
	if len(name) > MaxPathLen {
		t.Fatalf("name of %d bytes, want at most %d", len(name), MaxPathLen)
	}
	for _, e := range strings.Split(name, "/") {
		if len(e) > MaxElem {
			t.Fatalf("element of %d bytes", len(e))
		}
	}
	if again := tm.Render(Vars{crawl: "c", path: []string{long, strings.Repeat("b/", 600)}}); again != name {
		t.Fatal("shortening is not deterministic")
	}
	short := tm.Render(Vars{crawl: "c", path: []string{long}})
	if !strings.HasSuffix(short, ".html") {
		t.Errorf("a shortened element lost its extension: %q", short)
	}
}
