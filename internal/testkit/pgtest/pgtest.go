// Package pgtest starts private PostgreSQL servers for tests: initdb into a
// temporary directory, listening on a free port of 127.0.0.1 only (its
// unix socket in that directory too), stopped and removed when the test
// (or, for Shared, the package's tests) end. It never uses the system's
// cluster and never fakes one.
//
// initdb and postgres refuse to run as root: as root, pgtest runs them as
// the postgres user (made by Debian's postgresql package) or else nobody,
// and gives the directory to that user.
//
// Without PostgreSQL installed a test is skipped, saying how to install it
// (`make deps`), except in CI (CI set), where it fails, as Redis tests do.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/distscrape/distscrape/internal/testkit/shared"
)

// Options configure a server. The zero value has fsync off: quick, and
// safe against a killed client or server (the OS keeps what was written);
// only an OS crash would lose data.
type Options struct {
	Fsync bool // fsync=on, full_page_writes=on: durable as in production
}

// Server is a running private PostgreSQL.
type Server struct {
	Port     int
	Dir      string // the data directory is Dir/data, the socket is in Dir
	User     string // the superuser, with Password over TCP
	Password string
	bin      string // the directory of initdb and pg_ctl
	runAs    string // the OS user the server runs as; "" for this one
	opts     Options
}

// ErrNotInstalled: no initdb was found.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL not installed (no initdb in PATH or /usr/lib/postgresql/*/bin): install it with `make deps` (apt-get install -y postgresql)")

// BinDir returns the directory of initdb and pg_ctl: the one in PATH, or
// the newest /usr/lib/postgresql/<version>/bin (Debian's, not in PATH).
func BinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	if len(dirs) == 0 {
		return "", ErrNotInstalled
	}
	return filepath.Dir(dirs[0]), nil
}

func version(initdb string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(filepath.Dir(initdb))), 64)
	return v
}

// Require returns BinDir, or skips t (fails it in CI) when PostgreSQL is
// not installed.
func Require(t testing.TB) string {
	t.Helper()
	dir, err := BinDir()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return dir
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
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, opts: opts, User: "distscrape", Password: "pgtest-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		runAs: shared.RunAs("postgres")}
	if s.Dir, err = os.MkdirTemp("", "pgtest-"); err != nil {
		return nil, err
	}
	if err := s.initdb(); err != nil {
		os.RemoveAll(s.Dir)
		return nil, err
	}
	if s.Port, err = shared.OnFreePort(func(port int) error { s.Port = port; return s.start() }); err == nil {
		return s, nil
	}
	os.RemoveAll(s.Dir)
	return nil, err
}

// command runs a PostgreSQL program as the server's user.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	p := filepath.Join(s.bin, name)
	if s.runAs != "" {
		return exec.Command("runuser", append([]string{"-u", s.runAs, "--", p}, args...)...)
	}
	return exec.Command(p, args...)
}

func (s *Server) run(name string, args ...string) error {
	cmd := s.command(name, args...)
	cmd.Dir = s.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: %s: %w\n%s", name, err, shared.Tail(string(out)))
	}
	return nil
}

func (s *Server) initdb() error {
	pwfile := filepath.Join(s.Dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(s.Password+"\n"), 0o600); err != nil {
		return err
	}
	if s.runAs != "" {
		u, err := user.Lookup(s.runAs)
		if err != nil {
			return err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		for _, p := range []string{s.Dir, pwfile} {
			if err := os.Chown(p, uid, gid); err != nil {
				return err
			}
		}
	}
	return s.run("initdb", "-D", filepath.Join(s.Dir, "data"), "-U", s.User, "--pwfile", pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync")
}

// start runs pg_ctl start on s.Port and waits until the server answers.
func (s *Server) start() error {
	fsync := "off"
	if s.opts.Fsync {
		fsync = "on"
	}
	// synchronous_commit stays on: off, a commit returns before its WAL
	// reaches the OS, and a server stopped -m immediate loses it.
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=%s -c full_page_writes=%s -c max_connections=50",
		s.Port, s.Dir, fsync, fsync)
	if err := s.run("pg_ctl", "start", "-w", "-t", "60", "-D", filepath.Join(s.Dir, "data"),
		"-l", filepath.Join(s.Dir, "server.log"), "-o", opts); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
		return fmt.Errorf("%w\n%s", err, shared.Tail(string(log)))
	}
	return nil
}

// Stop stops the server at once (pg_ctl stop -m immediate: a crash to
// PostgreSQL, recovered from its WAL at the next Restart).
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if err := s.run("pg_ctl", "stop", "-m", "immediate", "-w", "-D", filepath.Join(s.Dir, "data")); err != nil {
		t.Fatal(err)
	}
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

// Close stops the server (pg_ctl stop -m fast) and removes its directory.
func (s *Server) Close() {
	s.run("pg_ctl", "stop", "-m", "fast", "-w", "-D", filepath.Join(s.Dir, "data"))
	os.RemoveAll(s.Dir)
}

// URL is a postgres:// URL of database db for the superuser over TCP.
func (s *Server) URL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(s.User, s.Password),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// CreateDB makes a database named name and returns its URL.
func (s *Server) CreateDB(t testing.TB, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	return s.URL(name)
}
