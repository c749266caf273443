package chromium

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/fetch/render"
	"github.com/distscrape/distscrape/test/fixturesite"
)

// TestRenderNoDownloads: a page sent as an attachment is rendered, and
// the downloads its script starts (an attachment in an iframe, a link
// with a download attribute, a blob: URL, the top frame sent to a file)
// write no file: not in the home directory (where Chromium's Downloads
// folder is), not in the working directory.
func TestRenderNoDownloads(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DOWNLOAD_DIR", filepath.Join(home, "Downloads"))
	work := t.TempDir()
	t.Chdir(work)
	tb := setup(t, nil)
	for _, rule := range []render.Rule{{WaitFor: render.NetworkIdle}, {}} {
		p, err := tb.render(t, fixturesite.JSDownloadPath, rule)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(p.Response.Body), fixturesite.JSDownloadText) {
			t.Errorf("the page sent as an attachment was not rendered:\n%.400s", p.Response.Body)
		}
	}
	// Another page after: what the first started has had its turn.
	if _, err := tb.render(t, fixturesite.JSLatePath, render.Rule{WaitFor: "#late"}); err != nil {
		t.Fatal(err)
	}
	if n := tb.site.Requests(fixturesite.JSDownloadFilePath); n == 0 {
		t.Fatal("the file was never asked for: the page started no download, the test proves nothing")
	}
	// Chromium keeps its own state in ~/.config and ~/.cache; any other
	// file, or one named as a download, is one.
	for _, dir := range []string{home, work} {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(home, p)
			state := dir == home && (strings.HasPrefix(rel, ".config/") || strings.HasPrefix(rel, ".cache/"))
			name := d.Name()
			if !state || strings.HasPrefix(name, "file-") || strings.HasSuffix(name, ".bin") ||
				strings.HasSuffix(name, ".crdownload") || name == "page.html" {
				t.Errorf("a file was written: %s", p)
			}
			return nil
		})
	}
	if _, err := os.Stat(filepath.Join(home, "Downloads")); err == nil {
		t.Error("a Downloads folder was made")
	}
}
