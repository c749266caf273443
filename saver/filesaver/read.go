package filesaver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// maxManifestLine bounds one manifest line (a page's key, URL, labels and
// aliases); a longer one is damage, not a page.
const maxManifestLine = 16 << 20

// Walk reads back the pages of a directory the file saver wrote, as its
// manifests (MetaDir/manifest-*.jsonl) list them: for each key its last
// line (the one fetched last, across the manifests of every worker), and
// the file that line names. The earlier versions under MetaDir are left
// out, and so are 304 revisits, whose lines name no new body.
//
// What a manifest line promised but the directory no longer holds is left
// out with a warning: a file removed since, or a file that a page saved
// later took over (the mirror layout's h/d/ and h/d/index.html are one
// file). A page saved with its links converted (Config.ConvertLinks) is
// passed as saved, converted links and all (the body as fetched is not
// kept), with a warning: a url field taken from such a page names the
// mirror's file, not the site's page.
//
// A manifest line that does not parse (a worker killed while writing it)
// is skipped; the other lines and manifests still read, and Walk then
// returns an error wrapping saver.ErrDamaged that names the manifest and
// line.
func Walk(ctx context.Context, dir string, fn saver.WalkFunc) (saver.Walked, error) {
	var w saver.Walked
	if st, err := os.Stat(dir); err != nil {
		return w, fmt.Errorf("file saver: %w", err)
	} else if !st.IsDir() {
		return w, fmt.Errorf("file saver: %s is no directory, so it has no %s/manifest-*.jsonl: %w", dir, MetaDir, saver.ErrNotStore)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return w, fmt.Errorf("file saver: %w", err)
	}
	defer root.Close()
	names, err := manifests(root, &w)
	if err != nil {
		return w, err
	}
	if len(names) == 0 {
		return w, fmt.Errorf("file saver: %s has no %s/manifest-*.jsonl: not a directory the file saver wrote: %w",
			dir, MetaDir, saver.ErrNotStore)
	}
	last := map[string]readLine{}
	var order []string
	var damaged []error
	pos := 0
	for _, name := range names {
		err := readManifest(ctx, root, name, func(l manifestRecord) {
			pos++
			if l.Unchanged || l.Kind != "" { // a 304, a redirect, a failure: no file
				w.Skipped++
				return
			}
			b, seen := last[l.Key]
			if !seen {
				order = append(order, l.Key)
			} else if l.Fetched.Before(b.Fetched) {
				w.Skipped++
				return
			} else {
				w.Skipped++ // the older copy's line
			}
			last[l.Key] = readLine{l, pos}
		})
		if errors.Is(err, saver.ErrDamaged) {
			damaged = append(damaged, err)
		} else if reason, ok := storekit.Refusal(err); ok {
			w.Refuse(name, reason)
		} else if err != nil {
			return w, err
		}
	}

	// Which page each file holds: the one saved there last.
	holder := map[string]readLine{}
	for _, k := range order {
		l := last[k]
		full := mirroredPath(root, l.Path)
		if h, ok := holder[full]; !ok || l.newer(h) {
			holder[full] = l
		}
	}
	var missing, shared, converted []string
	for _, k := range order {
		if err := ctx.Err(); err != nil {
			return w, err
		}
		l := last[k]
		full := mirroredPath(root, l.Path)
		if h := holder[full]; h.pos != l.pos {
			shared = append(shared, l.Key)
			w.Skipped++
			continue
		}
		body, err := readBody(root, full)
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, l.Path)
			w.Skipped++
			continue
		}
		if reason, ok := storekit.Refusal(err); ok {
			w.Refuse(l.Key, reason)
			continue
		}
		if err != nil {
			return w, fmt.Errorf("file saver: read %s: %w", filepath.Join(dir, filepath.FromSlash(full)), err)
		}
		if l.Converted {
			converted = append(converted, l.Path)
		}
		w.Pages++
		if err := fn(l.page(body)); err != nil {
			return w, err
		}
	}
	if len(missing) > 0 {
		w.Warnings = append(w.Warnings, fmt.Sprintf("%d pages the manifests list are gone from %s (first: %s)", len(missing), dir, missing[0]))
	}
	if len(shared) > 0 {
		w.Warnings = append(w.Warnings, fmt.Sprintf("%d pages share their file with a page saved there later, which it holds (first: %s)", len(shared), shared[0]))
	}
	if len(converted) > 0 {
		w.Warnings = append(w.Warnings, fmt.Sprintf("%d pages were saved with their links converted (saver.convert_links): "+
			"their links name the mirror's files, not the site's pages (first: %s)", len(converted), converted[0]))
	}
	if len(damaged) > 0 {
		return w, errors.Join(damaged...)
	}
	return w, nil
}

// manifests lists the manifests under MetaDir in name order; one that is
// no regular file (a symlink, a FIFO) is refused, not read.
func manifests(root *os.Root, w *saver.Walked) ([]string, error) {
	st, err := root.Lstat(MetaDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("file saver: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("file saver: %s/%s is no directory (a symlink is not followed): %w", root.Name(), MetaDir, saver.ErrNotStore)
	}
	d, err := root.Open(MetaDir)
	if err != nil {
		return nil, fmt.Errorf("file saver: %w", err)
	}
	ents, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("file saver: %w", err)
	}
	var names []string
	for _, e := range ents {
		if ok, _ := path.Match("manifest-*.jsonl", e.Name()); !ok {
			continue
		}
		name := MetaDir + "/" + e.Name()
		if !e.Type().IsRegular() {
			w.Refuse(name, "the manifest is no regular file (a symlink, a FIFO), not read")
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// readBody reads the file at rel in root: a regular file reached through
// no symlink, of at most saver.MaxWalkBody bytes; else an error wrapping
// saver.ErrRefused.
func readBody(root *os.Root, rel string) ([]byte, error) {
	f, st, err := storekit.OpenInRoot(root, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > saver.MaxWalkBody {
		return nil, storekit.ErrTooLarge(st.Size())
	}
	return storekit.ReadCapped(f)
}

type readLine struct {
	manifestRecord
	pos int // order of the line in the walk
}

// newer reports whether l was saved after o: fetched later, or at the
// same time and read later.
func (l readLine) newer(o readLine) bool {
	return l.Fetched.After(o.Fetched) || l.Fetched.Equal(o.Fetched) && l.pos > o.pos
}

// mirroredPath is the file of a manifest path in root: path/index.html
// once path became a directory (see Saver). A symlink is left as it is,
// for readBody to refuse.
func mirroredPath(root *os.Root, rel string) string {
	if st, err := root.Lstat(filepath.FromSlash(rel)); err == nil && st.IsDir() {
		return rel + "/index.html"
	}
	return rel
}

// readManifest calls fn with each line of a manifest that parses; lines
// that do not are an error wrapping saver.ErrDamaged, after the others.
func readManifest(ctx context.Context, root *os.Root, name string, fn func(manifestRecord)) error {
	f, _, err := storekit.OpenInRoot(root, name)
	if err != nil {
		return fmt.Errorf("file saver: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var bad []string
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			var long []byte
			long, err = readLong(br, line)
			line = long
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var rec manifestRecord
			switch jerr := json.Unmarshal(line, &rec); {
			case jerr != nil:
				bad = append(bad, fmt.Sprintf("line %d (%v)", n, jerr))
			case rec.Key == "" && rec.KeyBytes == nil, rec.Path == "" && !rec.Unchanged:
				bad = append(bad, fmt.Sprintf("line %d (no key or path)", n))
			default:
				if rec.KeyBytes != nil {
					rec.Key = string(rec.KeyBytes)
				}
				fn(rec)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("file saver: read %s: %w", name, err)
		}
	}
	if len(bad) > 0 {
		more := ""
		if len(bad) > 3 {
			more = fmt.Sprintf(" and %d more", len(bad)-3)
			bad = bad[:3]
		}
		return fmt.Errorf("file saver: %s: skipped %s%s that do not parse (a line cut short by a crash): %w",
			name, strings.Join(bad, ", "), more, saver.ErrDamaged)
	}
	return nil
}

// readLong reads the rest of a line longer than the reader's buffer, up
// to maxManifestLine.
func readLong(br *bufio.Reader, start []byte) ([]byte, error) {
	line := bytes.Clone(start)
	for {
		more, err := br.ReadSlice('\n')
		line = append(line, more...)
		if len(line) > maxManifestLine {
			// Skip to the line's end: the line is damage.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			return []byte("{"), err
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// page is the page a manifest line describes, with its file's body.
func (l readLine) page(body []byte) *saver.Page {
	h := http.Header{}
	if l.ContentType != "" {
		h.Set("Content-Type", l.ContentType)
	}
	for _, name := range saver.MetaHeaders {
		if v := l.Headers[strings.ToLower(name)]; v != "" {
			h.Set(name, v)
		}
	}
	return &saver.Page{Key: l.Key, URL: l.URL, Status: l.Status, ContentType: l.ContentType, FetchedAt: l.Fetched,
		Body: body, Header: h, Labels: l.Labels, Visit: l.Visit}
}
