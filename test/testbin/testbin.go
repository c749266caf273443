// Package testbin builds the distscrape binary once per test process and
// runs it as a real OS process, for the end-to-end, chaos and bad-input tests.
package testbin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Root is the module's root directory.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testbin: go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Build compiles ./cmd/distscrape once and returns the binary's path.
func Build(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "distscrape-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "distscrape")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/distscrape")
		cmd.Dir = Root(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// Cleanup removes the built binary; call it from TestMain after m.Run.
func Cleanup() {
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
}

// Result is a finished command.
type Result struct {
	Code           int
	Stdout, Stderr string
	MaxRSS         int64 // the process's peak resident set in bytes (Linux; 0 where unknown)
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s\n--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
}

// Cmd describes one invocation.
type Cmd struct {
	Dir   string   // working directory
	Env   []string // added to the test process's environment
	Stdin string
}

// Run runs the binary to completion within timeout.
func (c Cmd) Run(t testing.TB, timeout time.Duration, args ...string) Result {
	t.Helper()
	p := c.Start(t, args...)
	return p.Wait(t, timeout)
}

// Proc is a running binary.
type Proc struct {
	cmd    *exec.Cmd
	stdout syncBuffer
	stderr syncBuffer
	done   chan struct{}
	err    error
	Name   string
}

// Start starts the binary; it is killed when the test ends if still running.
func (c Cmd) Start(t testing.TB, args ...string) *Proc {
	t.Helper()
	p := &Proc{done: make(chan struct{}), Name: strings.Join(args, " ")}
	p.cmd = exec.Command(Build(t), args...)
	p.cmd.Dir = c.Dir
	p.cmd.Env = append(os.Environ(), c.Env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if c.Stdin != "" {
		p.cmd.Stdin = strings.NewReader(c.Stdin)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start distscrape %s: %v", p.Name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Stdout and Stderr so far.
func (p *Proc) Stdout() string { return p.stdout.String() }
func (p *Proc) Stderr() string { return p.stderr.String() }

// Wait waits for the exit, failing the test (after killing it) past timeout.
func (p *Proc) Wait(t testing.TB, timeout time.Duration) Result {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.cmd.Process.Signal(syscall.SIGQUIT) // a goroutine dump in stderr says where it hung
		select {
		case <-p.done:
		case <-time.After(2 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
		t.Fatalf("distscrape %s did not finish within %s\n%s", p.Name, timeout, p.result())
	}
	return p.result()
}

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *Proc) result() Result {
	r := Result{Stdout: p.stdout.String(), Stderr: p.stderr.String()}
	if ps := p.cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			r.MaxRSS = int64(ru.Maxrss) << 10 // Linux reports KiB
		}
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
	case errors.As(p.err, &ee):
		r.Code = ee.ExitCode()
	default:
		r.Code = -1
	}
	return r
}

// WaitFor polls cond every 20ms until it holds or timeout passes.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Status runs `status --json` on the crawl of config cfg.
func (c Cmd) Status(t testing.TB, cfg string) tracker.Stats {
	t.Helper()
	r := c.Run(t, time.Minute, "status", "-c", cfg, "--json")
	if r.Code != 0 {
		t.Fatalf("status: %s", r)
	}
	var st tracker.Stats
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.Stdout)
	}
	return st
}
