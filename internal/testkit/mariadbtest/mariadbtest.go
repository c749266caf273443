// Package mariadbtest starts private MariaDB (or MySQL) servers for tests:
// mariadb-install-db into a temporary directory, mariadbd listening on a
// free port of 127.0.0.1 only (its unix socket in that directory too),
// stopped and removed when the test (or, for Shared, the package's tests)
// end. It never uses the system's server and never fakes one.
//
// mariadbd refuses to run as root: as root, the directory is given to the
// mysql user (made by Debian's mariadb-server package) or else nobody, and
// the server runs as that user (--user).
//
// Without MariaDB installed a test is skipped, saying how to install it
// (`make deps`), except in CI (CI set), where it fails, as Redis tests do.
package mariadbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/distscrape/distscrape/internal/testkit/shared"
)

// Options configure a server. The zero value writes the redo log to the
// OS at each commit without fsync (innodb_flush_log_at_trx_commit=2):
// quick, and safe against a killed client or server; only an OS crash
// would lose data.
type Options struct {
	Fsync bool // innodb_flush_log_at_trx_commit=1: durable as in production
}

// Server is a running private MariaDB.
type Server struct {
	Port     int
	Dir      string // the data directory is Dir/data, the socket Dir/mysqld.sock
	User     string // a user with every privilege, with Password, from 127.0.0.1
	Password string
	install  string // mariadb-install-db or mysql_install_db
	server   string // mariadbd or mysqld
	runAs    string // the OS user the server runs as; "" for this one
	opts     Options
	proc     *exec.Cmd
	done     chan struct{} // closed when proc has exited
}

// ErrNotInstalled: no server or install program was found.
var ErrNotInstalled = errors.New("mariadbtest: MariaDB not installed (no mariadbd or mysqld, or no mariadb-install-db, in PATH or /usr/sbin): install it with `make deps` (apt-get install -y mariadb-server)")

// Programs returns the paths of the install program and the server.
func Programs() (install, server string, err error) {
	look := func(names ...string) string {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p
			}
			if p := filepath.Join("/usr/sbin", n); fileExists(p) {
				return p
			}
		}
		return ""
	}
	install, server = look("mariadb-install-db", "mysql_install_db"), look("mariadbd", "mysqld")
	if install == "" || server == "" {
		return "", "", ErrNotInstalled
	}
	return install, server, nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Require skips t (fails it in CI) when MariaDB is not installed.
func Require(t testing.TB) {
	t.Helper()
	if _, _, err := Programs(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// Start starts a server and registers its stop with t.Cleanup.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	Require(t)
	s, err := Launch(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Launch starts a server outside a test; the caller stops it with Close.
func Launch(opts Options) (*Server, error) {
	install, server, err := Programs()
	if err != nil {
		return nil, err
	}
	s := &Server{install: install, server: server, opts: opts, User: "distscrape",
		Password: "mariadbtest-" + strconv.FormatInt(time.Now().UnixNano(), 36), runAs: shared.RunAs("mysql")}
	if s.Dir, err = os.MkdirTemp("", "mariadbtest-"); err != nil {
		return nil, err
	}
	if err := s.installDB(); err != nil {
		os.RemoveAll(s.Dir)
		return nil, err
	}
	if s.Port, err = shared.OnFreePort(func(port int) error { s.Port = port; return s.start() }); err == nil {
		return s, nil
	}
	os.RemoveAll(s.Dir)
	return nil, err
}

// installDB makes the data directory and the init file that creates the
// test user at every start.
func (s *Server) installDB() error {
	init := fmt.Sprintf("CREATE USER IF NOT EXISTS '%[1]s'@'%%' IDENTIFIED BY '%[2]s';\n"+
		"GRANT ALL PRIVILEGES ON *.* TO '%[1]s'@'%%' WITH GRANT OPTION;\n", s.User, s.Password)
	if err := os.WriteFile(filepath.Join(s.Dir, "init.sql"), []byte(init), 0o600); err != nil {
		return err
	}
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(s.Dir, "data"), "--skip-test-db",
		"--skip-name-resolve", "--auth-root-authentication-method=socket"}
	if s.runAs != "" {
		if err := s.chown(s.Dir, filepath.Join(s.Dir, "init.sql")); err != nil {
			return err
		}
		args = append(args, "--user="+s.runAs)
	}
	cmd := exec.Command(s.install, args...)
	cmd.Dir = s.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mariadbtest: %s: %w\n%s", filepath.Base(s.install), err, shared.Tail(string(out)))
	}
	return nil
}

func (s *Server) chown(paths ...string) error {
	u, err := user.Lookup(s.runAs)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, p := range paths {
		if err := os.Chown(p, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// start runs the server on s.Port and waits until it answers s.User.
func (s *Server) start() error {
	flush := "2"
	if s.opts.Fsync {
		flush = "1"
	}
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(s.Dir, "data"),
		"--socket=" + filepath.Join(s.Dir, "mysqld.sock"), "--pid-file=" + filepath.Join(s.Dir, "mysqld.pid"),
		"--port=" + strconv.Itoa(s.Port), "--bind-address=127.0.0.1", "--skip-networking=0",
		"--log-error=" + filepath.Join(s.Dir, "server.log"), "--init-file=" + filepath.Join(s.Dir, "init.sql"),
		"--skip-name-resolve", "--innodb-flush-log-at-trx-commit=" + flush, "--innodb-buffer-pool-size=64M",
		"--performance-schema=0", "--max-connections=100", "--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_bin"}
	if s.runAs != "" {
		args = append(args, "--user="+s.runAs)
	}
	cmd := exec.Command(s.server, args...)
	cmd.Dir = s.Dir
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("mariadbtest: %s: %w", filepath.Base(s.server), err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.proc, s.done = cmd, done
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for {
		err := s.ping(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
			return fmt.Errorf("mariadbtest: %s exited: %v\n%s", filepath.Base(s.server), cmd.ProcessState, shared.Tail(string(log)))
		case <-ctx.Done():
			s.kill()
			return fmt.Errorf("mariadbtest: the server did not answer within 90s: %w", err)
		case <-time.After(50 * time.Millisecond): // poll until it answers or exits
		}
	}
}

func (s *Server) ping(ctx context.Context) error {
	db, err := sql.Open("mysql", s.DSN(""))
	if err != nil {
		return err
	}
	defer db.Close()
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return db.PingContext(c)
}

// kill ends the server at once (SIGKILL) and waits for it.
func (s *Server) kill() {
	if s.proc == nil {
		return
	}
	s.proc.Process.Signal(syscall.SIGKILL)
	<-s.done
	s.proc = nil
}

// Stop kills the server (SIGKILL: a crash to InnoDB, recovered from its
// redo log at the next Restart).
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.proc == nil {
		t.Fatal("mariadbtest: Stop of a stopped server")
	}
	s.kill()
}

// Restart starts a stopped server again on the same port and directory.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	var err error
	for i := 0; i < 50; i++ {
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond) // the port may linger a moment
	}
	t.Fatal(err)
}

// Close stops the server (SIGTERM, a clean shutdown) and removes its
// directory.
func (s *Server) Close() {
	if s.proc != nil {
		s.proc.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(time.Minute):
			s.kill()
		}
		s.proc = nil
	}
	os.RemoveAll(s.Dir)
}

// DSN is a go-sql-driver/mysql data source name of database db (none when
// "") for s.User over TCP.
func (s *Server) DSN(db string) string {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = s.User, s.Password, "tcp", s.addr(), db
	c.ParseTime = true
	return c.FormatDSN()
}

// URL is a mysql:// URL of database db for s.User over TCP, the form of
// the config's records.url.
func (s *Server) URL(db string) string {
	u := url.URL{Scheme: "mysql", User: url.UserPassword(s.User, s.Password), Host: s.addr(), Path: "/" + db}
	return u.String()
}

func (s *Server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// CreateDB makes a database named name and returns its URL.
func (s *Server) CreateDB(t testing.TB, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := sql.Open("mysql", s.DSN(""))
	if err != nil {
		t.Fatalf("mariadbtest: %v", err)
	}
	defer db.Close()
	q := "CREATE DATABASE `" + strings.ReplaceAll(name, "`", "``") + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
	if _, err := db.ExecContext(ctx, q); err != nil {
		t.Fatalf("mariadbtest: create database %s: %v", name, err)
	}
	return s.URL(name)
}
