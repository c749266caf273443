package scraper

import (
	"fmt"
	"strings"

	"github.com/distscrape/distscrape/internal/urlnorm"
	"github.com/distscrape/distscrape/tracker"
)

// How outside text becomes an item. One rule for every source: a seed (the
// config's scraper.seeds, a `seed` argument, a line of a seed file or of
// stdin) and an ID found on a page go through IDItem or URLItem, and every
// item, discovered links included, passes tracker.ValidateKey, which the
// trackers apply too.

// byteOrderMark is U+FEFF, which some editors write at the start of a UTF-8
// file; it reaches an item from a seed file's first line, from files joined
// with cat, or from $(cat file) on a command line.
const byteOrderMark = "\ufeff"

// TrimItem drops what surrounds an item in the text it came from: a leading
// byte-order mark and surrounding whitespace. A mark anywhere else is left
// for tracker.ValidateKey to refuse.
func TrimItem(raw string) string {
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(raw), byteOrderMark))
}

// IDItem returns the item of an ID crawl for raw (TrimItem'd): the ID as it
// is, which must be a valid tracker key (no whitespace or control character).
func IDItem(raw string) (tracker.Item, error) {
	id := TrimItem(raw)
	if err := tracker.ValidateKey(id); err != nil {
		return tracker.Item{}, err
	}
	return tracker.Item{Key: id}, nil
}

// URLItem returns the item of a link crawl for raw (TrimItem'd): the URL
// normalised as discovered links are, so one page is never two items. The
// text itself must pass tracker.ValidateKey before normalisation, which would
// otherwise escape a stray space or control character into a different URL
// silently; the normalised URL must pass it too.
func URLItem(raw string) (tracker.Item, error) {
	s := TrimItem(raw)
	if err := tracker.ValidateKey(s); err != nil {
		return tracker.Item{}, err
	}
	u, err := urlnorm.Normalize(s)
	if err != nil {
		return tracker.Item{}, fmt.Errorf("URL %s: %w", quoteItem(s), err)
	}
	if err := tracker.ValidateKey(u); err != nil {
		return tracker.Item{}, fmt.Errorf("URL %s once normalised: %w", quoteItem(s), err)
	}
	return tracker.Item{Key: u}, nil
}

func quoteItem(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q…", s[:80])
	}
	return fmt.Sprintf("%q", s)
}
