// Package s3test starts private S3-compatible servers for tests: a real
// versitygw process on a free port of 127.0.0.1, serving a temporary
// directory (posix backend) with known credentials, stopped when the test
// ends. It never fakes S3.
package s3test

import (
	"bytes"
	"context"
	"fmt"
	"go/build"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/distscrape/distscrape/internal/testkit/shared"
)

// Credentials and region of every server this package starts.
const (
	AccessKey = "distscrapetestkey"
	SecretKey = "distscrape-test-secret-0123456789abcdef"
	Region    = "us-east-1"
)

// Server is a running versitygw.
type Server struct {
	Endpoint string // http://127.0.0.1:PORT
	Dir      string // the posix backend's root: one subdirectory per bucket
	cmd      *exec.Cmd
	done     chan struct{}
	log      *lockedBuffer
}

// Binary returns the path of versitygw or fails the test with how to install it.
func Binary(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	var dirs []string
	if gp := build.Default.GOPATH; gp != "" {
		dirs = append(dirs, filepath.SplitList(gp)...)
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		dirs = append(dirs, filepath.SplitList(strings.TrimSpace(string(out)))...)
	}
	for _, d := range dirs {
		p := filepath.Join(d, "bin", "versitygw")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	t.Fatalf("versitygw not found in PATH or $(go env GOPATH)/bin: install it with `make deps` " +
		"(go install github.com/versity/versitygw/cmd/versitygw@v1.8.0); tests never skip S3")
	return ""
}

// Start starts a server and registers its stop with t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	s := &Server{Dir: t.TempDir()}
	var err error
	for i := 0; i < 5; i++ { // a free port can be taken between the probe and the bind
		if err = s.start(bin); err == nil {
			t.Cleanup(s.Kill)
			return s
		}
	}
	t.Fatalf("s3test: %v", err)
	return nil
}

func (s *Server) start(bin string) error {
	port, err := shared.FreePort()
	if err != nil {
		return err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.Endpoint = "http://" + addr
	s.log = &lockedBuffer{}
	s.cmd = exec.Command(bin, "--port", addr, "--access", AccessKey, "--secret", SecretKey,
		"--region", Region, "--quiet", "posix", s.Dir)
	// Credentials go by flag; keep the caller's AWS settings out of the server.
	s.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.Dir}
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start versitygw: %w", err)
	}
	s.done = make(chan struct{})
	go func() { s.cmd.Wait(); close(s.done) }()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("versitygw on %s exited: %s", addr, s.log.String())
		default:
		}
		if resp, err := client.Get(s.Endpoint + "/"); err == nil {
			resp.Body.Close()
			return nil // any HTTP answer (403 without a signature) means it is serving
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Kill()
	return fmt.Errorf("versitygw on %s not ready after 30s: %s", addr, s.log.String())
}

// Kill stops the server at once.
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.done
	}
}

// Client returns an S3 client with the server's credentials, path-style.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
	})
}

// CreateBucket creates a bucket or fails the test.
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("s3test: create bucket %q: %v", name, err)
	}
}

// SetEnv points the standard AWS credential chain at this server for the
// test: credentials and region from the environment, no shared config
// files, no instance metadata lookups.
func (s *Server) SetEnv(t testing.TB) {
	t.Helper()
	SetEnvCredentials(t, AccessKey, SecretKey)
}

// SetEnvCredentials sets the AWS environment for a test with the given keys.
func SetEnvCredentials(t testing.TB, access, secret string) {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":           access,
		"AWS_SECRET_ACCESS_KEY":       secret,
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  Region,
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             empty,
		"AWS_SHARED_CREDENTIALS_FILE": empty,
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_ENDPOINT_URL":            "",
		"AWS_ENDPOINT_URL_S3":         "",
	} {
		t.Setenv(k, v)
	}
}

// lockedBuffer collects the server's output, keeping the last 8 KiB.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	if l.b.Len() > 16<<10 {
		tail := append([]byte(nil), l.b.Bytes()[l.b.Len()-8<<10:]...)
		l.b.Reset()
		l.b.Write(tail)
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
