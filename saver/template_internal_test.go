package saver

import (
	"strings"
	"testing"
)

// TestFoldCase: on a case-insensitive file system, names that differ only
// in case must stay distinct.
func TestFoldCase(t *testing.T) {
	tm, err := parseTemplate("saver.name", "{id}", Placeholders)
	if err != nil {
		t.Fatal(err)
	}
	tm.foldCase = true
	seen := map[string]string{}
	for _, k := range []string{"A", "a", "Index.HTML", "index.html", "%41", "ÄB", "äb"} {
		name := tm.render(vars{id: k})
		lower := strings.ToLower(name)
		if prev, ok := seen[lower]; ok {
			t.Errorf("keys %q and %q map to names equal but for case: %q", prev, k, name)
		}
		seen[lower] = k
	}
	if got := tm.render(vars{id: "Ab"}); got != "%41b" {
		t.Errorf("render(Ab) = %q, want %%41b", got)
	}
}

func TestShortenKeepsLimits(t *testing.T) {
	tm, _ := parseTemplate("saver.name", "{crawl}/{path}", Placeholders)
	long := strings.Repeat("é", 400) + ".html"
	name := tm.render(vars{crawl: "c", path: []string{long, strings.Repeat("b/", 600)}})
	if len(name) > maxPathLen {
		t.Fatalf("name of %d bytes, want at most %d", len(name), maxPathLen)
	}
	for _, e := range strings.Split(name, "/") {
		if len(e) > maxElem {
			t.Fatalf("element of %d bytes", len(e))
		}
	}
	if again := tm.render(vars{crawl: "c", path: []string{long, strings.Repeat("b/", 600)}}); again != name {
		t.Fatal("shortening is not deterministic")
	}
	short := tm.render(vars{crawl: "c", path: []string{long}})
	if !strings.HasSuffix(short, ".html") {
		t.Errorf("a shortened element lost its extension: %q", short)
	}
}
