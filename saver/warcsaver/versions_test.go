package warcsaver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/warctest"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// TestWARCUnchangedRevisit: a 304 is a revisit record of the
// server-not-modified profile, referring to the response of the page this
// saver wrote, or, written by a fresh saver, to the page's URI only; labels
// and the visit are on every record of the page.
func TestWARCUnchangedRevisit(t *testing.T) {
	dir := t.TempDir()
	first := savertest.NewPage("http://example.test/a", []byte("the body"))
	first.Labels = []string{"news", "a,b"}
	unchanged := *first
	unchanged.Body, unchanged.Unchanged, unchanged.Visit, unchanged.Status, unchanged.Reason = nil, true, 1, 304, "Not Modified"
	unchanged.FetchedAt = first.FetchedAt.Add(time.Hour)
	recs := saveAndRead(t, warcsaver.Config{Dir: dir, ReferUnchanged: true}, first, &unchanged)
	again := unchanged
	again.Visit, again.FetchedAt = 2, unchanged.FetchedAt.Add(time.Hour)
	recs = append(recs, saveAndRead(t, warcsaver.Config{Dir: t.TempDir(), ReferUnchanged: true}, &again)...) // a restarted worker
	var resp warctest.Record
	var revisits []warctest.Record
	for _, r := range recs {
		if r.Type == "request" || r.Type == "response" || r.Type == "revisit" {
			if got := saver.SplitLabels(unMeta(r.Get(warcsaver.FieldLabels))); fmt.Sprint(got) != fmt.Sprint(first.Labels) {
				t.Errorf("%s record: labels %q, want %q", r.Type, got, first.Labels)
			}
		}
		switch r.Type {
		case "response":
			resp = r
		case "revisit":
			revisits = append(revisits, r)
		}
	}
	if len(revisits) != 2 || resp.Type == "" {
		t.Fatalf("%d revisit records and response %v, want 2 and one", len(revisits), resp.Type != "")
	}
	for i, r := range revisits {
		wantID, wantDate := resp.Get("WARC-Record-ID"), resp.Get("WARC-Date")
		if i == 1 {
			wantID, wantDate = "", "" // the restarted worker never saw the response
		}
		if r.Get("WARC-Profile") != "http://netpreserve.org/warc/1.1/revisit/server-not-modified" ||
			r.Get("WARC-Refers-To-Target-URI") != first.URL || r.Get("WARC-Refers-To") != wantID ||
			r.Get("WARC-Refers-To-Date") != wantDate || r.HTTP.StatusCode != 304 || r.Get(warcsaver.FieldVisit) != strconv.Itoa(i+1) {
			t.Errorf("revisit %d: %v (status %d)", i, r.Header, r.HTTP.StatusCode)
		}
	}
}

// TestRecordsUnchanged: the WARC saver records a 304 (a revisit record),
// so the manager hands it one.
func TestRecordsUnchanged(t *testing.T) {
	s := newWARC(t, warcsaver.Config{})
	defer s.Close(context.Background())
	if !saver.RecordsUnchanged(s) {
		t.Errorf("RecordsUnchanged(%T) = false, want true", s)
	}
}

// TestWARCCDXJUnchangedDigest: the index line of a 304's revisit record
// carries the payload digest of the response it refers to (by which an
// index user resolves it), none when the response is unknown to the
// saver; the index is readable by all (0644), as the WARC file is.
func TestWARCCDXJUnchangedDigest(t *testing.T) {
	for _, refer := range []bool{true, false} {
		t.Run(fmt.Sprint("refer=", refer), func(t *testing.T) {
			dir := t.TempDir()
			first := savertest.NewPage("http://example.test/a", []byte("the body"))
			unchanged := *first
			unchanged.Body, unchanged.Unchanged, unchanged.Visit, unchanged.Status = nil, true, 1, 304
			unchanged.FetchedAt = first.FetchedAt.Add(time.Hour)
			saveAndRead(t, warcsaver.Config{Dir: dir, CDX: true, ReferUnchanged: refer}, first, &unchanged)
			files := warcFiles(t, dir)
			cdxj := strings.TrimSuffix(files[0], ".warc.gz") + ".cdxj"
			for _, f := range []string{files[0], cdxj} {
				if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o644 {
					t.Errorf("%s: mode %v, %v; want 0644", filepath.Base(f), fi.Mode().Perm(), err)
				}
			}
			raw, err := os.ReadFile(cdxj)
			if err != nil {
				t.Fatal(err)
			}
			digests := map[string]string{} // mime -> digest
			for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				var js map[string]string
				if err := json.Unmarshal([]byte(strings.SplitN(l, " ", 3)[2]), &js); err != nil {
					t.Fatal(err)
				}
				digests[js["mime"]] = js["digest"]
			}
			want := strings.TrimPrefix(warctest.Digest(first.Body), "sha1:")
			if !refer {
				want = ""
			}
			if digests["text/html"] != strings.TrimPrefix(warctest.Digest(first.Body), "sha1:") || digests["warc/revisit"] != want {
				t.Errorf("digests %v, want the revisit's %q", digests, want)
			}
		})
	}
}
