package e2e

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/distscrape/distscrape/internal/testkit/mariadbtest"
	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// mysqlProducts reads the product table of database db of srv.
func mysqlProducts(t *testing.T, srv *mariadbtest.Server, db string) map[string][]product {
	t.Helper()
	conn, err := sql.Open("mysql", srv.DSN(db)+"&loc=UTC")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(t.Context(), "SELECT `key`, name, price, currency, in_stock, updated, rating, image, tags FROM product WHERE crawl = 'shop'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][]product{}
	for rows.Next() {
		var key, tags string
		var p product
		if err := rows.Scan(&key, &p.Name, &p.Price, &p.Currency, &p.InStock, &p.Updated, &p.Rating, &p.Image, &tags); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tags), &p.Tags); err != nil {
			t.Errorf("%s: tags %q: %v", key, tags, err)
		}
		got[key] = append(got[key], p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestScrapeFleetIntoMySQL: two workers on Redis write into one MariaDB
// (records.kind: mysql, the password from the environment); one is
// SIGKILLed mid-crawl. Every product is there once; status and lookup
// read the records back, and no output shows the password.
func TestScrapeFleetIntoMySQL(t *testing.T) {
	my := mariadbtest.Start(t, mariadbtest.Options{})
	url := strings.Replace(my.CreateDB(t, "shop"), ":"+my.Password+"@", ":${E2E_MYSQL_PASSWORD}@", 1)
	site := fixturesite.Start(t, fixturesite.Options{Products: 300, Latency: 20 * time.Millisecond})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: shop", redisTracker(rs, "2s"), shopScraper(site),
		"fetch: {concurrency: 3, per_host_concurrency: 8, timeout: 10s}", "saver: {kind: none}",
		shopRules, fmt.Sprintf("records: {kind: mysql, url: '%s'}", url))
	cmd := testbin.Cmd{Dir: dir, Env: []string{"E2E_MYSQL_PASSWORD=" + my.Password}}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	victim := cmd.Start(t, "worker", "-c", cfg, "--id", "victim")
	other := cmd.Start(t, "worker", "-c", cfg, "--id", "other")
	testbin.WaitFor(t, time.Minute, "20 pages done", func() bool { return status(t, cmd, cfg).Done >= 20 })
	if victim.Exited() {
		t.Fatalf("the victim finished before it could be killed; make the site slower: %s", victim.Stderr())
	}
	victim.Signal(syscall.SIGKILL)
	<-victim.Done()
	if st := status(t, cmd, cfg); st.Pending+st.Leased == 0 {
		t.Fatalf("nothing left after the kill; the test proves nothing: %+v", st)
	}
	r := other.Wait(t, runTimeout)
	if r.Code != exitDeadLetters { // the shop's broken products
		t.Fatalf("other worker: %s", r)
	}
	checkProducts(t, site, mysqlProducts(t, my, "shop"))
	conn, err := sql.Open("mysql", my.DSN("shop"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var listed, distinct int
	if err := conn.QueryRowContext(t.Context(), `SELECT COUNT(*), COUNT(DISTINCT id) FROM listing WHERE crawl = 'shop'`).Scan(&listed, &distinct); err != nil {
		t.Fatal(err)
	}
	if listed != len(site.Products()) || distinct != listed {
		t.Errorf("listing: %d records of %d products, want %d once each", listed, distinct, len(site.Products()))
	}
	checkCaptchas(t, site, deadLetters(t, cmd, cfg), true)

	st := cmd.Run(t, time.Minute, "status", "-c", cfg)
	if want := fmt.Sprintf(": listing %d, product %d\n", len(site.Products()), len(site.ProductURLs())); st.Code != 0 || !strings.Contains(st.Stdout, "records in MySQL mysql://xxxxx@") || !strings.Contains(st.Stdout, want) {
		t.Errorf("status: want the records in MySQL (password hidden) and %q\n%s", want, st)
	}
	first := site.Products()[0]
	lk := cmd.Run(t, time.Minute, "lookup", "-c", cfg, site.URL()+fixturesite.ProductPath(first.ID))
	if want := fmt.Sprintf("record product[0] currency=%q", first.Currency); lk.Code != 0 || !strings.Contains(lk.Stdout, want) {
		t.Errorf("lookup: want %q\n%s", want, lk)
	}
	for name, out := range map[string]string{"worker": other.Stderr() + r.Stdout, "status": st.String(), "lookup": lk.String()} {
		if strings.Contains(out, my.Password) {
			t.Errorf("the %s output shows the database password", name)
		}
	}
}

// TestScrapeMySQLDown: MariaDB is killed mid-crawl for longer than a
// lease: the pages whose records cannot be written wait (their leases
// extended), then go back to the queue without an attempt; with
// max_attempts 2 no page but the captchas is a dead letter, none is
// completed without its records, and once the database is back the crawl
// ends with every record.
func TestScrapeMySQLDown(t *testing.T) {
	my := mariadbtest.Start(t, mariadbtest.Options{})
	url := my.CreateDB(t, "shop")
	site := fixturesite.Start(t, fixturesite.Options{Products: 150, Latency: 20 * time.Millisecond})
	rs := redistest.Start(t, redistest.Options{})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: shop",
		fmt.Sprintf("tracker: {kind: redis, url: %q, lease_ttl: 4s, batch: 8, max_attempts: 2, backoff: {base: 100ms, max: 400ms}}", rs.URL(0)),
		shopScraper(site), "fetch: {concurrency: 2, per_host_concurrency: 4, timeout: 10s}", "saver: {kind: none}",
		shopRules, fmt.Sprintf("records: {kind: mysql, url: '%s'}", url))
	cmd := testbin.Cmd{Dir: dir}
	if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
		t.Fatalf("seed: %s", r)
	}
	w := cmd.Start(t, "worker", "-c", cfg, "--id", "w")
	testbin.WaitFor(t, time.Minute, "10 pages done", func() bool { return status(t, cmd, cfg).Done >= 10 })
	my.Stop(t)
	testbin.WaitFor(t, time.Minute, "two groups of pages given up", func() bool {
		e := w.Stderr()
		return strings.Count(e, "handed back without an attempt")+strings.Count(e, "records flush failed") >= 2
	})
	if w.Exited() {
		t.Fatalf("the worker stopped with its database: %s", w.Stderr())
	}
	if strings.Contains(w.Stderr(), "records flush failed") {
		t.Errorf("an outage failed pages:\n%s", w.Stderr())
	}
	during := status(t, cmd, cfg)
	if during.Leased+during.Delayed+during.Pending == 0 {
		t.Errorf("no page waits while the database is down: %+v", during)
	}
	my.Restart(t)
	if r := w.Wait(t, runTimeout); r.Code != exitDeadLetters { // the captchas
		t.Fatalf("worker: %s", r)
	}
	if strings.Contains(w.Stderr(), my.Password) {
		t.Error("the worker's output shows the database password")
	}
	checkProducts(t, site, mysqlProducts(t, my, "shop"))
	checkCaptchas(t, site, deadLetters(t, cmd, cfg), false)
	if st := status(t, cmd, cfg); st.Done != int64(site.ShopPages()+len(site.ProductURLs())) {
		t.Errorf("done %d, want every listing and product page", st.Done)
	}
}

// TestScrapeMySQLReservedName: a rule or a field named with a reserved
// word of MySQL is stored like any other (every name is quoted), so a
// crawl moves from another sink without renaming.
func TestScrapeMySQLReservedName(t *testing.T) {
	my := mariadbtest.Start(t, mariadbtest.Options{})
	site := fixturesite.Start(t, fixturesite.Options{})
	dir := t.TempDir()
	cfg := writeYAML(t, dir, "crawl: shop", "tracker: {kind: memory}", shopScraper(site), "saver: {kind: none}",
		"extract: [{name: order, match: '/shop/p/', fields: {title: {css: h1}, desc: {css: h1}}}]",
		fmt.Sprintf("records: {kind: mysql, url: '%s'}", my.CreateDB(t, "reserved")))
	if r := (testbin.Cmd{Dir: dir}).Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress"); r.Code != 0 && r.Code != exitDeadLetters {
		t.Fatalf("crawl: %s", r)
	}
	conn, err := sql.Open("mysql", my.DSN("reserved"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n, same int
	err = conn.QueryRowContext(t.Context(), "SELECT COUNT(*), COALESCE(SUM(`desc` = title), 0) FROM `order` WHERE crawl = 'shop'").Scan(&n, &same)
	if err != nil || n < len(site.ProductURLs()) || same != n {
		t.Fatalf("rows of `order`: %d (%d with desc = title), %v; want one per product page (%d or more)", n, same, err, len(site.ProductURLs()))
	}
}
