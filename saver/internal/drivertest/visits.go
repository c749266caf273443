package drivertest

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
)

// VisitKey is the page the revisit tests save again and again.
const VisitKey = "http://example.test/revisited.html"

// VisitPage is the page of VisitKey at visit n: 64 KiB that say n.
func VisitPage(n int) *saver.Page {
	line := fmt.Sprintf("visit %d\n", n)
	p := savertest.NewPage(VisitKey, bytes.Repeat([]byte(line), (64<<10)/len(line)))
	p.Visit, p.FetchedAt = n, time.Date(2026, 11, 25, 0, 0, n, 0, time.UTC)
	return p
}

// VisitOf reads which visit a body is; -1 for a torn or foreign body.
func VisitOf(b []byte) int {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	n, err := strconv.Atoi(strings.TrimPrefix(string(line), "visit "))
	if err != nil || !bytes.Equal(b, VisitPage(n).Body) {
		return -1
	}
	return n
}

// SaveAll saves pages with s, failing the test on the first error.
func SaveAll(t testing.TB, s saver.Saver, pages ...*saver.Page) {
	t.Helper()
	for _, p := range pages {
		if err := s.Save(context.Background(), p); err != nil {
			t.Fatalf("Save(%q): %v", p.Key, err)
		}
	}
}

// SaveOne saves one page with the saver of worker w that a constructor
// returned, and closes it.
func SaveOne(t *testing.T, w string, s saver.Saver, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("worker %q: %v", w, err)
	}
	ctx := context.Background()
	if err := s.Save(ctx, savertest.NewPage("http://h/p", []byte("p"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
