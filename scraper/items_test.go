package scraper

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/tracker"
)

// TestSeedItems: the one rule for text that becomes an item. A leading
// byte-order mark is dropped wherever it lands (a file's first line, files
// joined with cat, $(cat file) on a command line); every other invisible,
// space or control character is refused, never escaped into a new item.
func TestSeedItems(t *testing.T) {
	const bom = "\ufeff"
	id, link := IDItem, URLItem
	for _, c := range []struct {
		name  string
		parse func(string) (tracker.Item, error)
		raw   string
		want  string // the key, or what the refusal says
		ok    bool
	}{
		{"plain", id, "101", "101", true},
		{"URL", link, "http://h.test/a", "http://h.test/a", true},
		{"leading BOM", id, bom + "101", "101", true},
		{"leading BOM before a URL", link, bom + "http://h.test/a", "http://h.test/a", true},
		{"BOM then spaces", id, bom + "  101\t", "101", true},
		{"spaces then BOM", id, " " + bom + "101", "101", true},
		{"two BOMs", id, bom + bom + "101", "byte-order mark U+FEFF at byte 0", false},
		{"BOM inside", id, "10" + bom + "1", "byte-order mark U+FEFF at byte 2", false},
		{"BOM inside a URL", link, "http://h.test/a" + bom, "byte-order mark", false},
		{"BOM alone", id, bom, "empty key", false},
		{"NUL", id, "1\x000", "NUL", false},
		{"NUL in a URL", link, "http://h.test/\x00", "NUL", false},
		{"bell", id, "1\a", "control character U+0007", false},
		{"C1 control in a URL", link, "http://h.test/a\u0085b", "control character U+0085", false},
		{"inner space", id, "1 2", "whitespace U+0020", false},
		{"inner space in a URL", link, "http://h.test/a b", "whitespace U+0020", false},
		{"no-break space", id, "1\u00a02", "whitespace U+00A0", false},
		{"zero-width space", id, "1\u200b", "U+200B", false},
		{"invalid UTF-8", id, "1\xff", "invalid UTF-8", false},
		{"UTF-16 BOM bytes", link, "\xff\xfehttp://h.test/", "invalid UTF-8", false},
		{"too long", id, strings.Repeat("9", tracker.MaxKeyLen+1), "longer than", false},
		{"too long once escaped", link, "http://h.test/" + strings.Repeat("é", tracker.MaxKeyLen/2-10), "once normalised", false},
		{"not a URL", link, "h.test/a", "invalid URL", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			it, err := c.parse(c.raw)
			switch {
			case c.ok && (err != nil || it.Key != c.want):
				t.Fatalf("%q = %q, %v; want %q", c.raw, it.Key, err, c.want)
			case !c.ok && err == nil:
				t.Fatalf("%q = %q; want refused (%s)", c.raw, it.Key, c.want)
			case !c.ok && !strings.Contains(err.Error(), c.want):
				t.Fatalf("%q: %v; want it to say %q", c.raw, err, c.want)
			case !c.ok && c.want != "invalid URL" && !errors.Is(err, tracker.ErrInvalidItem):
				t.Fatalf("%q: %v does not wrap ErrInvalidItem", c.raw, err)
			}
		})
	}
}

// TestIDScrapeInvalidDiscoveries: a discovered ID follows the seeds' rule;
// one the tracker cannot take is logged and not followed, never dropped
// silently (nor sent to the tracker, which would refuse the whole batch).
func TestIDScrapeInvalidDiscoveries(t *testing.T) {
	var logs bytes.Buffer
	s, err := NewID(IDConfig{IDRegex: `id="([^"]*)"`, DownloadURLFmt: "http://h.test/item/{id}",
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	body := `id="1" id="` + "\ufeff2" + `" id="3 4" id="5` + "\a" + `" id="6` + "\u200b" + `" id="" id=" 7 " id="` + strings.Repeat("8", tracker.MaxKeyLen+1) + `"`
	items, err := s.Scrape(context.Background(), tracker.Item{Key: "0"}, page("http://h.test/item/0", "text/html", body))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(items), []string{"1", "2", "7"}; !slices.Equal(got, want) {
		t.Fatalf("discovered %q, want %q", got, want)
	}
	if err := tracker.ValidateItems(items); err != nil {
		t.Fatalf("a discovery the tracker refuses: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "ids=4") || !strings.Contains(l, "whitespace U+0020") {
		t.Fatalf("the 4 invalid IDs are not logged with the first reason: %s", l)
	}
}
