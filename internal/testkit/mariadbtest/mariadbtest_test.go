package mariadbtest_test

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/mariadbtest"
	_ "github.com/go-sql-driver/mysql"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Main(m)) }

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestStartStop: a private server answers on 127.0.0.1 with its password,
// refuses a wrong one, and comes back after a kill with what was
// committed.
func TestStartStop(t *testing.T) {
	ctx := context.Background()
	s := mariadbtest.Start(t, mariadbtest.Options{Fsync: true})
	if s.Port == 3306 {
		t.Fatal("the private server took the system's port")
	}
	db := open(t, s.DSN(""))
	var datadir string
	if err := db.QueryRowContext(ctx, "SELECT @@datadir").Scan(&datadir); err != nil || !strings.HasPrefix(datadir, s.Dir) {
		t.Fatalf("datadir %q, %v: not the private server's", datadir, err)
	}
	var bind string
	if err := db.QueryRowContext(ctx, "SELECT @@bind_address").Scan(&bind); err != nil || bind != "127.0.0.1" {
		t.Fatalf("bind address %q, %v", bind, err)
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE d"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE d.t (x int) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO d.t VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(s.DSN(""), s.Password, "wrong", 1)
	if err := open(t, bad).PingContext(ctx); err == nil {
		t.Fatal("a wrong password was accepted")
	}
	db.Close()
	s.Stop(t)
	if err := open(t, s.DSN("")).PingContext(ctx); err == nil {
		t.Fatal("connected to a stopped server")
	}
	s.Restart(t)
	var x int
	if err := open(t, s.DSN("d")).QueryRowContext(ctx, "SELECT x FROM t").Scan(&x); err != nil || x != 42 {
		t.Fatalf("after a restart: %d, %v", x, err)
	}
}

// TestShared: databases of the shared server are apart.
func TestShared(t *testing.T) {
	ctx := context.Background()
	a, b := mariadbtest.NewDB(t), mariadbtest.NewDB(t)
	if a == b {
		t.Fatal("two NewDB gave one database")
	}
	for _, u := range []string{a, b} {
		name := u[strings.LastIndex(u, "/")+1:]
		db := open(t, mariadbtest.Shared(t).DSN(name))
		if _, err := db.ExecContext(ctx, "CREATE TABLE t (x int)"); err != nil {
			t.Fatal(err)
		}
	}
}
