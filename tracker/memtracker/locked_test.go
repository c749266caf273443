//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package memtracker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockedNamesHolder: a second tracker on a state file in use fails with
// ErrLocked naming the process that holds it; once it is closed, the file
// is free again.
func TestLockedNamesHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.state")
	first, err := New(Config{StatePath: path})
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	want := fmt.Sprintf("pid %d on %s", os.Getpid(), host)
	_, err = New(Config{StatePath: path})
	var le *LockedError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) || le.Holder != want || !strings.Contains(err.Error(), want) {
		t.Fatalf("second open: %v, want ErrLocked naming %q", err, want)
	}
	first.Close()
	again, err := New(Config{StatePath: path})
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	again.Close()
}
