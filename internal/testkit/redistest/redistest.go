// Package redistest starts private redis-server processes for tests: each on
// a free port of 127.0.0.1, in its own temporary directory, stopped when the
// test ends. It never uses a shared Redis and never fakes one.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/shared"
)

// Options configure a private server. The zero value is an in-memory server
// with the noeviction policy.
type Options struct {
	AOF             bool   // appendonly yes
	AppendFsync     string // always | everysec | no (with AOF); default everysec
	MaxmemoryPolicy string // default noeviction
	Maxmemory       string // e.g. "64mb"; default unlimited
	Password        string // requirepass for the default user
	Args            []string

	// clusterNode makes the server a Redis Cluster node (cluster.go): its
	// port is picked so that the bus port, port+10000, is free too.
	clusterNode bool
}

// Server is a running private redis-server.
type Server struct {
	Port int
	Dir  string
	opts Options
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	t    testing.TB
}

// Start starts a server and registers its stop with t.Cleanup.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{opts: opts, t: t, Dir: t.TempDir()}
	var err error
	for i := 0; i < 5; i++ {
		if s.Port, err = s.freePort(); err != nil {
			t.Fatalf("redistest: free port: %v", err)
		}
		if err = s.start(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.Kill)
	return s
}

// Launch starts a server outside a test (benchmark programs, tools) in dir,
// which must exist. The caller stops it with Kill.
func Launch(opts Options, dir string) (*Server, error) {
	s := &Server{opts: opts, Dir: dir}
	var err error
	for i := 0; i < 5; i++ {
		if s.Port, err = s.freePort(); err != nil {
			return nil, fmt.Errorf("redistest: free port: %w", err)
		}
		if err = s.start(); err == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("redistest: %w", err)
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// URL is a redis:// URL for database db, with the password if one is set.
func (s *Server) URL(db int) string {
	if s.opts.Password != "" {
		return fmt.Sprintf("redis://:%s@%s/%d", s.opts.Password, s.Addr(), db)
	}
	return fmt.Sprintf("redis://%s/%d", s.Addr(), db)
}

// Client returns a client for database 0, closed when the test ends.
func (s *Server) Client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: s.opts.Password})
	t.Cleanup(func() { c.Close() })
	return c
}

func (s *Server) args() []string {
	a := []string{
		"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--dir", s.Dir, "--save", "", "--daemonize", "no",
		"--logfile", filepath.Join(s.Dir, "redis.log"),
		"--maxmemory-policy", orDefault(s.opts.MaxmemoryPolicy, "noeviction"),
	}
	if s.opts.AOF {
		a = append(a, "--appendonly", "yes", "--appendfsync", orDefault(s.opts.AppendFsync, "everysec"))
	} else {
		a = append(a, "--appendonly", "no")
	}
	if s.opts.Maxmemory != "" {
		a = append(a, "--maxmemory", s.opts.Maxmemory)
	}
	if s.opts.Password != "" {
		a = append(a, "--requirepass", s.opts.Password, "--masterauth", s.opts.Password)
	}
	if s.opts.clusterNode {
		// A short node timeout makes a failover test's promotion quick.
		a = append(a, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000")
	}
	return append(a, s.opts.Args...)
}

func (s *Server) start() error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("redis-server not found in PATH: install it (apt-get install -y redis-server, or `make deps`)")
	}
	s.cmd = exec.Command(bin, s.args()...)
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan error, 1)
	done := make(chan struct{})
	s.done = done
	go func() { exited <- s.cmd.Wait(); close(done) }()
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: s.opts.Password, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
			return fmt.Errorf("redis-server on port %d exited: %v\n%s", s.Port, err, shared.Tail(string(log)))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		// LOADING means the AOF is being replayed: keep waiting.
		if err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.cmd.Process.Kill()
	<-done
	return fmt.Errorf("redis-server on port %d not ready after 20s", s.Port)
}

// Kill stops the server at once (SIGKILL), keeping its directory.
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.done
		waitPortClosed(s.Addr())
	}
}

// Restart kills the server and starts it again on the same port and
// directory (with AOF, on the same append-only file).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	var err error
	for i := 0; i < 50; i++ {
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond) // the port may linger briefly
	}
	t.Fatalf("redistest: restart: %v", err)
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) { return shared.FreePort() }

func waitPortClosed(addr string) {
	for i := 0; i < 200; i++ {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Signal sends sig to the server (e.g. SIGSTOP to freeze it).
func (s *Server) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }
