//go:build unix

package webdavsaver_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/webdavsaver"
)

// refusingAddr is an address on 127.0.0.1 that refuses connections: a
// port bound, so no one else takes it, but not listening.
func refusingAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}

// A refused connection is an error that says so (ECONNREFUSED) at Open,
// at Flush (the page kept for the next one, which saves it once the
// server is back) and in Walk; none prints the password.
func TestRefusedConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const user, pass = "crawler", "refused-s3cret"
	down := refusingAddr(t)
	downURL := authURL(t, "http://"+down+"/dav/store/", user, pass)

	_, err := webdavsaver.New(ctx, webdavsaver.Config{URL: downURL, Crawl: "c"})
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("New: %v, want ECONNREFUSED", err)
	}
	noSecret(t, "New", err, pass)
	_, err = webdavsaver.Walk(ctx, webdavsaver.Config{URL: downURL, Crawl: "c"}, func(*saver.Page) error { return nil })
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Walk: %v, want ECONNREFUSED", err)
	}
	noSecret(t, "Walk", err, pass)

	d := startDAV(t, basicAuth(user, pass))
	s, err := webdavsaver.New(ctx, webdavsaver.Config{URL: authURL(t, d.URL+"/store/", user, pass), Crawl: "c"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	up := strings.TrimPrefix(d.srv.URL, "http://")
	webdavsaver.RedirectDials(s, down) // the server goes down
	if err := s.Save(ctx, savertest.NewPage("kept", []byte("kept"))); err != nil {
		t.Fatal(err)
	}
	err = s.Flush(ctx)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Flush: %v, want ECONNREFUSED", err)
	}
	noSecret(t, "Flush", err, pass)
	webdavsaver.RedirectDials(s, up) // and comes back
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush once the server is back: %v", err)
	}
	if n := len(diskReader{root: filepath.Join(d.Dir, "store")}.metas(t)); n != 1 {
		t.Fatalf("%d pages stored, want 1", n)
	}
}
