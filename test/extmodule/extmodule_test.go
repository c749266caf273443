package extmodule

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
	"github.com/distscrape/distscrape/tracker"
)

// report is what testdata/crawler prints.
type report struct {
	Saved []string      `json:"saved"`
	Stats tracker.Stats `json:"stats"`
}

func TestExternalModuleCrawlsFixtureSite(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	root := testbin.Root(t)
	dir := copyProgram(t, root)
	bin := filepath.Join(t.TempDir(), "crawler")
	// -mod=mod fills in the requirements distscrape brings (the copied
	// go.sum has their checksums, the shared module cache their code), so
	// the build needs no network.
	goCmd(ctx, t, dir, "mod", "edit", "-replace=github.com/distscrape/distscrape="+root)
	goCmd(ctx, t, dir, "build", "-mod=mod", "-o", bin, ".")

	site := fixturesite.Start(t, fixturesite.Options{Pages: 40, NotFound: 2, PageSize: 1024})

	var stdout, stderr bytes.Buffer
	run := exec.CommandContext(ctx, bin, site.URL())
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("crawler: %v\n%s", err, stderr.String())
	}
	var got report
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("crawler output %q: %v", stdout.String(), err)
	}
	want := site.Pages()
	slices.Sort(want)
	if !slices.Equal(got.Saved, want) {
		t.Errorf("saved %d pages, want %d:\n got %v\nwant %v", len(got.Saved), len(want), got.Saved, want)
	}
	notFound, _ := site.FailingPages()
	if got.Stats.Done != int64(len(want)) || got.Stats.Failed != int64(len(notFound)) ||
		got.Stats.Pending+got.Stats.Leased+got.Stats.Delayed != 0 {
		t.Errorf("stats %+v, want done %d, failed %d, nothing left", got.Stats, len(want), len(notFound))
	}
}

// copyProgram copies testdata/crawler and the repository's go.sum to a
// temporary directory, so that the build writes nothing in the repository.
func copyProgram(t *testing.T, root string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", "crawler")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, strings.TrimPrefix(path, src)), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// goCmd runs the go command in dir, outside the repository's module.
func goCmd(ctx context.Context, t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
