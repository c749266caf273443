package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestRecordsTableDropped: someone drops the product table of a SQLite
// records database mid-crawl. The next write makes it again (a warning
// says so) and no page fails for it: every product page completed after
// the drop has its row, and the rows the table held when dropped are the
// only ones missing.
func TestRecordsTableDropped(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Products: 120, Latency: 20 * time.Millisecond})
	dir := t.TempDir()
	db := filepath.Join(dir, "out", "shop.db")
	cfg := writeYAML(t, dir, "crawl: shop", "tracker: {kind: memory, max_attempts: 2, batch: 4}", shopScraper(site),
		"fetch: {concurrency: 2, timeout: 10s}", "saver: {kind: none}", shopRules, "records: {kind: sqlite, path: out/shop.db}")
	testbin.Build(t)
	p := testbin.Cmd{Dir: dir}.Start(t, "crawl", "-c", cfg, "--no-progress")
	conn, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows := func() (n int) {
		_ = conn.QueryRow(`SELECT count(*) FROM product`).Scan(&n)
		return n
	}
	testbin.WaitFor(t, time.Minute, "10 product rows", func() bool { return rows() >= 10 || p.Exited() })
	if p.Exited() {
		t.Fatalf("the crawl ended before the drop: %s", p.Wait(t, time.Second))
	}
	// Count and drop in one transaction: no row is written between.
	ctx := context.Background()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var dropped int
	if err := tx.QueryRow(`SELECT count(*) FROM product`).Scan(&dropped); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`DROP TABLE product`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	r := p.Wait(t, runTimeout)
	if r.Code != exitDeadLetters || !strings.Contains(r.Stdout, fmt.Sprintf("%d pages LOST", len(site.CaptchaURLs()))) {
		t.Fatalf("crawl: want the captchas as its only dead letters (exit 3): %s", r)
	}
	if strings.Contains(r.Stderr, "records flush failed") || !strings.Contains(r.Stderr, "making it again") {
		t.Errorf("want the table made again and no flush failed:\n%s", r.Stderr)
	}
	got := 0
	for _, s := range sqliteSets(t, db) {
		if s.Rule == "product" {
			got++
		}
	}
	if want := len(site.ProductURLs()) - dropped; got != want || got == 0 {
		t.Errorf("%d product rows after the crawl, want %d (%d products, %d dropped with the table)", got, want, len(site.ProductURLs()), dropped)
	}
}
