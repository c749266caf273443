package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/pgtest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// TestCheckRecordsDatabase: check reaches the records database as it
// reaches the tracker: OK naming it while PostgreSQL is up, exit 1 naming
// the records and the connection (never the password) while it is down.
func TestCheckRecordsDatabase(t *testing.T) {
	pg := pgtest.Start(t, pgtest.Options{})
	url := pg.CreateDB(t, "shop")
	site := fixturesite.Start(t, fixturesite.Options{Products: 5})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: shop", "tracker: {kind: memory}", shopScraper(site), "saver: {kind: none}",
		shopRules, fmt.Sprintf("records: {kind: postgres, url: '%s'}", url))
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "check", "-c", cfg); r.Code != 0 || !strings.Contains(r.Stdout, "records ok: PostgreSQL") {
		t.Fatalf("check, database up: want records ok\n%s", r)
	}
	pg.Stop(t)
	r := cmd.Run(t, time.Minute, "check", "-c", cfg)
	if r.Code != 1 || !strings.Contains(r.Stderr, "records: ") || !strings.Contains(r.Stderr, "connect") || strings.Contains(r.Stdout, "records ok") {
		t.Errorf("check, database down: want exit 1 naming the records database\n%s", r)
	}
	if strings.Contains(r.Stdout+r.Stderr, pg.Password) {
		t.Errorf("check shows the password\n%s", r)
	}
}
