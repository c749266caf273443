package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a private redis-server on a free port of 127.0.0.1, in
// memory (no RDB, no AOF) with the noeviction policy the tracker requires.
// It is the start logic of internal/testkit/redistest, which another module cannot
// import.
type redisServer struct {
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// startRedis starts redis-server in dir (which must exist).
func startRedis(ctx context.Context, dir string) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found in PATH: install it (apt-get install -y redis-server, or `make deps`)")
	}
	var last error
	for range 5 { // a free port may be taken before redis binds it
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		s := &redisServer{port: port, done: make(chan struct{})}
		s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no",
			"--logfile", filepath.Join(dir, "redis.log"), "--maxmemory-policy", "noeviction")
		if err := s.cmd.Start(); err != nil {
			return nil, fmt.Errorf("start redis-server: %w", err)
		}
		go func() { s.cmd.Wait(); close(s.done) }()
		if last = s.waitReady(ctx); last == nil {
			return s, nil
		}
		s.stop()
	}
	return nil, last
}

func (s *redisServer) waitReady(ctx context.Context) error {
	c := redis.NewClient(&redis.Options{Addr: s.addr(), MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("redis-server on port %d exited at start", s.port)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := c.Ping(pctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("redis-server on port %d not ready after 20s", s.port)
}

func (s *redisServer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// url is the redis:// URL of database db.
func (s *redisServer) url(db int) string { return fmt.Sprintf("redis://%s/%d", s.addr(), db) }

// version is the server's redis_version.
func (s *redisServer) version(ctx context.Context) string {
	c := redis.NewClient(&redis.Options{Addr: s.addr()})
	defer c.Close()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "unknown"
	}
	return infoField(info, "redis_version")
}

// cpu is the CPU time the server has used so far (user + system).
func (s *redisServer) cpu(ctx context.Context) time.Duration {
	c := redis.NewClient(&redis.Options{Addr: s.addr()})
	defer c.Close()
	info, err := c.Info(ctx, "cpu").Result()
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, f := range []string{"used_cpu_user", "used_cpu_sys"} {
		v, _ := strconv.ParseFloat(infoField(info, f), 64)
		total += time.Duration(v * float64(time.Second))
	}
	return total
}

func (s *redisServer) stop() {
	if s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// infoField returns the value of field in a Redis INFO reply.
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}
