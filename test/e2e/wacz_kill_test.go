package e2e

import (
	"archive/zip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/distscrape/distscrape/test/testbin"
)

// TestWACZKilledLeavesNoTemp: a wacz stopped while it writes (SIGTERM,
// SIGINT, SIGKILL) leaves no temporary file once the next wacz of the same
// output has run, and that run writes a valid WACZ; a stop by signal
// removes its own at once.
func TestWACZKilledLeavesNoTemp(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "warc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// 30 pages of 4 MB that do not compress, so the packing takes a while.
	rng := rand.NewChaCha8([32]byte{1})
	for f := range 3 {
		path := filepath.Join(dir, fmt.Sprintf("w-%d.warc.gz", f))
		out, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			body := make([]byte, 4<<20)
			rng.Read(body)
			zw, _ := gzip.NewWriterLevel(out, gzip.NoCompression)
			hostileWARCRecord(zw, fmt.Sprintf("http://shop.test/%d/%d", f, i), "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n", body, 0)
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(base, "site.wacz")
	temps := func() []string {
		m, _ := filepath.Glob(filepath.Join(base, ".*tmp*"))
		m2, _ := filepath.Glob(filepath.Join(base, ".wacz-*"))
		return append(m, m2...)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGKILL} {
		p := (testbin.Cmd{Dir: base}).Start(t, "wacz", "-o", target, dir)
		testbin.WaitFor(t, time.Minute, "the temporary file", func() bool { return len(temps()) > 0 || p.Exited() })
		if p.Exited() {
			t.Fatalf("wacz ended before it could be stopped: write more pages\n%s", p.Stderr())
		}
		if err := p.Signal(sig); err != nil {
			t.Fatal(err)
		}
		r := p.Wait(t, time.Minute)
		if sig != syscall.SIGKILL {
			if left := temps(); len(left) > 0 {
				t.Errorf("wacz stopped by %v left %q (exit %d)", sig, left, r.Code)
			}
		}
	}
	if r := (testbin.Cmd{Dir: base}).Run(t, 2*time.Minute, "wacz", "-o", target, dir); r.Code != 0 {
		t.Fatalf("wacz after the killed one: %s", r)
	}
	if left := temps(); len(left) > 0 {
		t.Errorf("after a killed wacz and a full one, temporary files are left: %q", left)
	}
	zr, err := zip.OpenReader(target)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	n := 0
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, rc); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
		rc.Close()
		n++
	}
	if n < 4 {
		t.Errorf("the WACZ holds %d files", n)
	}
}
