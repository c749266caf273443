package filesaver

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/disk"
	"github.com/distscrape/distscrape/saver/internal/naming"
)

// CapturePath is where the capture of kind of the page saved at rel is
// kept: beside it, rel plus saver.CaptureSuffix (h/d/index.html%.pdf),
// its last element shortened as a page's would be when the suffix makes
// it too long. "" for an unknown kind.
func CapturePath(rel, kind string) string {
	suffix := saver.CaptureSuffix(kind)
	if suffix == "" {
		return ""
	}
	dir, base := path.Split(rel)
	if len(base)+len(suffix) > naming.MaxElem {
		base = naming.Shorten(base, naming.MaxElem-len(suffix))
	}
	return dir + base + suffix
}

// saveCaptures writes p's captures (Page.Captures) beside the file at rel (a temporary
// file renamed into place, like the page) and removes the copies of the
// kinds p has none of, left there by an earlier save of the page: the
// files beside a page are always its last save's (no versions are kept). It returns the
// captures' paths by kind, for the manifest, and the paths it wrote.
func (f *Saver) saveCaptures(rel string, p *saver.Page) (map[string]string, []string, error) {
	var paths map[string]string
	var changed []string
	for _, kind := range saver.CaptureKinds {
		crel := CapturePath(rel, kind)
		full := filepath.Join(f.root, filepath.FromSlash(crel))
		data := captureData(p, kind)
		if data == nil {
			// The page's directory, synced with the page, keeps the removal.
			if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, nil, err
			}
			continue
		}
		tmp := filepath.Join(f.tmpDir, strconv.FormatUint(f.tmpSeq.Add(1), 10))
		if err := disk.WriteNew(tmp, data); err != nil {
			return nil, nil, err
		}
		if !p.FetchedAt.IsZero() {
			if err := os.Chtimes(tmp, p.FetchedAt, p.FetchedAt); err != nil {
				os.Remove(tmp)
				return nil, nil, err
			}
		}
		if err := os.Rename(tmp, full); err != nil {
			os.Remove(tmp)
			return nil, nil, err
		}
		if paths == nil {
			paths = map[string]string{}
		}
		paths[kind] = crel
		changed = append(changed, crel)
	}
	return paths, changed, nil
}

// captureData is p's capture of kind, nil when it has none.
func captureData(p *saver.Page, kind string) []byte {
	for _, c := range p.Captures {
		if c.Kind == kind {
			return c.Data
		}
	}
	return nil
}
