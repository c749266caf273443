package pgtest_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/pgtest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestStartStop: a private server answers on 127.0.0.1 with its password,
// refuses a wrong one, and comes back after an immediate stop with what
// was committed.
func TestStartStop(t *testing.T) {
	ctx := context.Background()
	s := pgtest.Start(t, pgtest.Options{Fsync: true})
	if s.Port == 5432 {
		t.Fatal("the private server took the system's port")
	}
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	var addr string
	if err := c.QueryRow(ctx, "SELECT inet_server_addr()::text").Scan(&addr); err != nil || !strings.HasPrefix(addr, "127.0.0.1") {
		t.Fatalf("server address %q, %v", addr, err)
	}
	if _, err := c.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	bad := strings.Replace(s.URL("postgres"), s.Password, "wrong", 1)
	if c, err := pgx.Connect(ctx, bad); err == nil {
		c.Close(ctx)
		t.Fatal("a wrong password was accepted")
	}
	s.Stop(t)
	if c, err := pgx.Connect(ctx, s.URL("postgres")); err == nil {
		c.Close(ctx)
		t.Fatal("connected to a stopped server")
	}
	s.Restart(t)
	c, err = pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var x int
	if err := c.QueryRow(ctx, "SELECT x FROM t").Scan(&x); err != nil || x != 42 {
		t.Fatalf("after a restart: %d, %v", x, err)
	}
}

// TestShared: databases of the shared server are apart.
func TestShared(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.NewDB(t), pgtest.NewDB(t)
	if a == b {
		t.Fatal("two NewDB gave one database")
	}
	for _, u := range []string{a, b} {
		c, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
			t.Fatal(err)
		}
		c.Close(ctx)
	}
}
