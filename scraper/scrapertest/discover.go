package scrapertest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// HostileValues are what a page may offer as an item: each is the value
// of one match of the scraper's regex. None may become an invalid item;
// "2", "ok-3" and "/page/4.html" are valid for every kind of scraper and
// must be found.
var HostileValues = []string{
	"2", "ok-3", "/page/4.html",
	"", " ", "\t", "\n",
	"a\x00b", "a\x01b", "a\x7fb", "a\u0085b", "a\u200bb", "\ufeff5",
	"a b", "a\nb", "a\r\nb",
	"\xff\xfe", "a\xc3",
	strings.Repeat("9", tracker.MaxKeyLen+1),
	"/" + strings.Repeat("p", tracker.MaxKeyLen),
	"javascript:alert(1)", "mailto:a@example.org", "data:text/html,x", "ftp://127.0.0.1/x",
	"http://", "http:///x", "//", "%zz", "/a%00b", "http://127.0.0.1:9/a b",
	"../../../../etc/passwd", "http://127.0.0.1:9/page/../../x",
}

func testDiscoveredValid(t *testing.T, ctx context.Context, newTarget Factory) {
	tg := newTarget(t, defaultConfig())
	var body strings.Builder
	body.WriteString("<html><body>\n")
	for _, v := range HostileValues {
		fmt.Fprintf(&body, "<a data-item=\"%s\">x</a>\n", v)
	}
	body.WriteString("</body></html>\n")
	items, err := tg.Scraper.Scrape(ctx, pageItem(tg), page(200, body.String()))
	if err != nil {
		t.Fatalf("Scrape of a page with hostile values: %v", err)
	}
	if len(items) < 3 {
		t.Fatalf("Scrape found %d items (%q), want at least the 3 valid ones", len(items), keys(items))
	}
	seen := map[string]bool{}
	for _, it := range items {
		if err := tracker.ValidateItem(it); err != nil {
			t.Errorf("discovered %q: not a valid tracker item: %v", it.Key, err)
		}
		if seen[it.Key] {
			t.Errorf("discovered %q twice", it.Key)
		}
		seen[it.Key] = true
		if !tg.URLs {
			continue
		}
		u, err := url.Parse(it.Key)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Errorf("discovered %q: not an absolute http(s) URL (%v)", it.Key, err)
		}
	}
}

// pathological is a regex that backtracks exponentially on a run of a's
// with no b after it; the lookbehind keeps it off linear-time engines.
const pathological = `(?<=x)((a+)+)b`

func testRegexTimeout(t *testing.T, ctx context.Context, newTarget Factory) {
	cfg := defaultConfig()
	cfg.Regex, cfg.RegexTimeout = pathological, 100*time.Millisecond
	tg := newTarget(t, cfg)
	body := strings.Repeat("x"+strings.Repeat("a", 40)+"!\n", 4)
	done := make(chan error, 1)
	go func() {
		_, err := tg.Scraper.Scrape(ctx, pageItem(tg), page(200, body))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Scrape of a pathological page = nil error, want a final \"regex timeout\"")
		}
		expectOutcome(t, "pathological page", err, true, "regex timeout")
	case <-ctx.Done():
		t.Fatalf("Scrape of a pathological page did not stop within %v (regex_timeout %v)", caseTimeout, cfg.RegexTimeout)
	}
}

func keys(items []tracker.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Key
	}
	return out
}
