package filesaver

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/disk"
)

// VersionsDir is the directory under MetaDir that holds the earlier
// versions of pages: those of the page at path P are the files
// VersionsDir/P/VersionPrefix+stamp, stamp its fetch time
// (saver.VersionStamp).
const VersionsDir = "versions"

// VersionPrefix starts the name of every earlier version: "%v" is in no
// mirror path element, where "%" is always followed by two hex digits or
// stands alone.
const VersionPrefix = "%v"

// fileVersion is what keeping an earlier version did: the version kept
// (relative path, "" when none) and the versions pruned by KeepVersions.
type fileVersion struct {
	previous string
	pruned   []string
}

// keepVersion prunes the oldest versions of rel to make room, then links
// the file at full (about to be replaced by a revisit's body) into the
// versions directory under its fetch time (the file's modification time,
// which Save sets): never more than keep-1 versions, even after a crash.
// A link, not a move: the page stays at its path until the rename of the
// new body replaces it, so a crash at any point leaves the page, and a
// retried save finds the version already there.
// A file with the new body already (a retried save of the same visit) is
// no earlier version.
func (f *Saver) keepVersion(rel, full string, body []byte) (fileVersion, error) {
	var v fileVersion
	st, err := os.Lstat(full)
	if err != nil || !st.Mode().IsRegular() {
		return v, nil
	}
	if st.Size() == int64(len(body)) {
		old, err := os.ReadFile(full)
		if err == nil && bytes.Equal(old, body) {
			return v, nil
		}
	}
	dirRel := MetaDir + "/" + VersionsDir + "/" + rel
	dir := filepath.Join(f.root, filepath.FromSlash(dirRel))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return v, fmt.Errorf("versions directory: %w", err)
	}
	name := VersionPrefix + saver.VersionStamp(st.ModTime())
	ents, err := os.ReadDir(dir)
	if err != nil {
		return v, fmt.Errorf("list versions: %w", err)
	}
	var names []string
	there := false
	for _, e := range ents {
		if e.Name() == name {
			there = true // a retried save: linked before the crash
		} else if strings.HasPrefix(e.Name(), VersionPrefix) && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	// Make room first, so that a crash never leaves more than keep-1.
	sort.Strings(names)
	for len(names) > f.keep-2 {
		if err := os.Remove(filepath.Join(dir, names[0])); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return v, fmt.Errorf("prune version: %w", err)
		}
		v.pruned = append(v.pruned, dirRel+"/"+names[0])
		names = names[1:]
	}
	if !there {
		if err := os.Link(full, filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrExist) {
			if err := copyFile(full, filepath.Join(dir, name)); err != nil { // no hard links here
				return v, fmt.Errorf("keep version: %w", err)
			}
		}
	}
	v.previous = dirRel + "/" + name
	f.mu.Lock()
	f.files[v.previous] = struct{}{}
	f.mu.Unlock()
	return v, nil
}

// copyFile copies from into a new file to (which must not exist) and
// keeps from's modification time.
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	st, err := os.Stat(from)
	if err != nil {
		return err
	}
	if err := disk.WriteNew(to, b); err != nil {
		return err
	}
	return os.Chtimes(to, st.ModTime(), st.ModTime())
}
