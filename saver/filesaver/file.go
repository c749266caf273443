// Package filesaver saves each page as one file under a directory: a
// mirror of the sites (host/path, optionally with links converted for
// offline browsing) or a flat layout named by a template, with a manifest
// per worker and earlier versions of revisited pages.
package filesaver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/disk"
	"github.com/distscrape/distscrape/saver/internal/naming"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// Config configures the file saver.
type Config struct {
	Dir string // root directory, created if missing; nothing is ever written outside it
	// Layout is "mirror" (default): host/path as on the site, index.html for
	// directory URLs, the query escaped into the name; or "flat": Name.
	Layout string
	// Name is the flat layout's template (default "{id}"); a literal "/" in
	// it makes subdirectories. Ignored by the mirror layout.
	Name   string
	Crawl  string
	Worker string
	// Logger gets the warning when a page replaces a file that another URL
	// shares (see Saver); default slog.Default().
	Logger *slog.Logger
	// ConvertLinks, when set, makes an offline mirror: the links of every
	// HTML page and style sheet saved are rewritten to the files of their
	// targets (see convert.go). Mirror layout only.
	ConvertLinks LinkResolver
	// KeepVersions is how many versions of a page are kept, the newest at
	// its path and the earlier ones under MetaDir/versions; 0 means
	// saver.DefaultKeepVersions, 1 the newest only.
	KeepVersions int
}

// MetaDir is the directory under Dir where the file saver keeps its
// manifests and temporary files; no page is ever saved there.
const MetaDir = ".distscrape"

// Saver saves each page as one file under a directory. A page is written to
// a temporary file and renamed into place, so a reader never sees half a
// page; Flush makes the files and directories changed since the last Flush
// durable (once per batch, not per page), with the manifest.
//
// The manifest, MetaDir/manifest-{crawl}-{worker}.jsonl, has one JSON line
// per save (key, key_bytes when the key is not UTF-8, path, url, status, content_type, fetched, size,
// headers: the saver.MetaHeaders by lower-case name; labels, visit; unchanged,
// previous, pruned for revisits; converted; captures, see manifestRecord): it maps
// every item to its file, which a hashed or shortened name cannot show.
// Re-saving an item rewrites the same file, so there is one copy; the
// manifest then has two lines for it and a reader keeps the last.
//
// The mirror layout (saver/internal/naming) maps distinct URLs to distinct
// files, but for one deliberate merge, as on a web server: a directory URL h/d/ and
// h/d/index.html are one file. And when h/a/b is saved after h/a, the file
// h/a moves to h/a/index.html (like wget), so a manifest path that is now a
// directory means path/index.html; h/a saved when h/a is already a
// directory goes to h/a/index.html too. The manifest line of a page saved
// to such a shared file lists the other URLs in "aliases", and a page that
// replaces a shared file is logged as a warning: a body is never replaced
// silently.
//
// With ConvertLinks, HTML pages and style sheets are saved with their links
// converted (convert.go); the manifest's size is then the saved file's.
//
// A revisit's changed body (Page.Visit > 0) keeps the file it replaces as
// an earlier version, MetaDir/versions/PATH/%vSTAMP, at most KeepVersions-1
// of them (keepVersion); a 304 (Page.Unchanged) is a manifest line only.
// A rendered page's copies are files beside it (saveCaptures).
type Saver struct {
	root     string
	tmpDir   string
	tmpl     *naming.Template
	crawl    string
	worker   string
	mirror   bool
	log      *slog.Logger
	manifest *os.File
	tmpSeq   atomic.Uint64
	convert  LinkResolver // nil: bodies are saved as fetched
	keep     int          // versions of a page kept, the newest included

	mu      sync.Mutex
	closed  bool
	files   map[string]struct{} // paths (relative) renamed into place since the last Flush
	records []byte              // manifest lines not yet written

	flushMu sync.Mutex   // one Flush at a time: a second one waits for the first's fsyncs
	moveMu  sync.RWMutex // the file-to-directory fix-up (writer) against Flush's fsyncs (readers)
}

type manifestRecord struct {
	Key         string    `json:"key"`
	KeyBytes    []byte    `json:"key_bytes,omitempty"` // the exact key, base64, when it is not valid UTF-8 (JSON would alter it)
	Path        string    `json:"path"`
	URL         string    `json:"url,omitempty"`
	Status      int       `json:"status,omitempty"`
	ContentType string    `json:"content_type,omitempty"`
	Fetched     time.Time `json:"fetched"`
	Size        int       `json:"size"`
	// Headers holds the page's saver.MetaHeaders, by lower-case name.
	Headers map[string]string `json:"headers,omitempty"`
	Aliases []string          `json:"aliases,omitempty"` // other URLs the mirror layout saves to this file; it holds the last saved
	Labels  []string          `json:"labels,omitempty"`
	Visit   int               `json:"visit,omitempty"` // earlier completed visits of the item (0: the first)
	// Unchanged marks a revisit answered 304: no file was written, the
	// key's last line without it still says where its body is.
	Unchanged bool `json:"unchanged,omitempty"`
	// Kind is "redirect" for a redirect on the way to the page (Location
	// says where to) and "failed" for the response an item failed with;
	// neither writes a file. Empty for a page.
	Kind     string `json:"kind,omitempty"`
	Location string `json:"location,omitempty"`
	// Converted marks a page saved with its links converted
	// (Config.ConvertLinks): the file is not the body as fetched.
	Converted bool `json:"converted,omitempty"`
	// Previous is the earlier version this save kept (under
	// MetaDir/versions), Pruned those it removed to stay within KeepVersions.
	Previous string   `json:"previous,omitempty"`
	Pruned   []string `json:"pruned,omitempty"`
	// Captures are the paths of the page's copies by kind (CapturePath).
	Captures map[string]string `json:"captures,omitempty"`
}

// New creates the directory if needed and opens the worker's manifest.
func New(cfg Config) (*Saver, error) {
	t, root, err := fileConfig(cfg)
	if err != nil {
		return nil, err
	}
	keep, _ := storekit.KeepVersions(cfg.KeepVersions) // checked by fileConfig
	f := &Saver{root: root, tmpl: t, crawl: cfg.Crawl, worker: cfg.Worker, files: map[string]struct{}{},
		mirror: cfg.Layout != "flat", log: cfg.Logger, convert: cfg.ConvertLinks, keep: keep}
	if f.log == nil {
		f.log = slog.Default()
	}
	// The worker name is checked by the command and the manager
	// (tracker.ValidateWorker; a saver imports no other distscrape package),
	// and escaped here as one path element whatever it is: ".." or "." once
	// made this directory every worker's, emptied below.
	wid := t.EscapeElem(cfg.Worker)
	// Each worker has its own temporary directory, emptied at start: what is
	// there was left by a crash of this worker and was never renamed into place.
	f.tmpDir = filepath.Join(root, MetaDir, "tmp", wid)
	if err := os.RemoveAll(f.tmpDir); err != nil {
		return nil, fmt.Errorf("file saver: clean %s: %w", f.tmpDir, err)
	}
	if err := os.MkdirAll(f.tmpDir, 0o755); err != nil {
		return nil, fmt.Errorf("file saver: %w", err)
	}
	if f.tmpl.FoldCase, err = caseInsensitive(f.tmpDir); err != nil {
		return nil, fmt.Errorf("file saver: probe case sensitivity of %s: %w", root, err)
	}
	name := "manifest-" + t.Escape(cfg.Crawl) + "-" + wid + ".jsonl"
	f.manifest, err = os.OpenFile(filepath.Join(root, MetaDir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("file saver: open manifest: %w", err)
	}
	// A crash may have cut the last line short: start on a fresh line.
	if st, err := f.manifest.Stat(); err == nil && st.Size() > 0 {
		f.records = append(f.records, '\n')
	}
	return f, nil
}

// Check validates cfg as New does and checks that the directory is
// writable (or can be created), creating and changing nothing: what a
// read-only command (distscrape check) needs before a crawl.
func Check(cfg Config) error {
	_, root, err := fileConfig(cfg)
	if err != nil {
		return err
	}
	if err := disk.CheckWritable(root); err != nil {
		return fmt.Errorf("file saver: %w", err)
	}
	return nil
}

// fileConfig checks cfg and returns the name template and the absolute
// directory, touching nothing (New and Check share it).
func fileConfig(cfg Config) (*naming.Template, string, error) {
	if cfg.Dir == "" {
		return nil, "", storekit.ConfigErr("saver.dir", "empty directory")
	}
	tmpl := cfg.Name
	switch cfg.Layout {
	case "", "mirror":
		tmpl = "{host}/{path}"
	case "flat":
		if tmpl == "" {
			tmpl = "{id}"
		}
	default:
		return nil, "", storekit.ConfigErr("saver.layout", "unknown layout %q (use mirror or flat)", cfg.Layout)
	}
	if _, err := storekit.KeepVersions(cfg.KeepVersions); err != nil {
		return nil, "", err
	}
	if cfg.ConvertLinks != nil && cfg.Layout == "flat" {
		return nil, "", storekit.ConfigErr("saver.convert_links", "needs saver.layout mirror: a flat name says nothing of where a link's target is")
	}
	t, err := naming.Parse("saver.name", tmpl, saver.Placeholders)
	if err != nil {
		return nil, "", err
	}
	root, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, "", fmt.Errorf("saver.dir %q: %w", cfg.Dir, err)
	}
	return t, root, nil
}

// caseInsensitive reports whether dir's file system folds case (macOS,
// Windows, ext4 casefold): names then escape upper-case letters, so that
// A.html and a.html stay two files.
func caseInsensitive(dir string) (bool, error) {
	upper := filepath.Join(dir, "CaseProbe")
	if err := os.WriteFile(upper, nil, 0o644); err != nil {
		return false, err
	}
	defer os.Remove(upper)
	_, err := os.Stat(filepath.Join(dir, "caseprobe"))
	return err == nil, nil
}

// Path returns the path of p's file, relative to Dir and slash-separated.
// It is always local to Dir (never absolute, never "..") and never inside
// MetaDir.
func (f *Saver) Path(p *saver.Page) string {
	rel := f.tmpl.Render(naming.PageVars(p, f.crawl, f.worker))
	first, rest, _ := strings.Cut(rel, "/")
	if strings.EqualFold(first, MetaDir) {
		rel = "%2E" + first[1:]
		if rest != "" {
			rel += "/" + rest
		}
	}
	return rel
}

// RecordsUnchanged is true: a revisit answered 304 is a manifest line
// ("unchanged": true), its file untouched.
func (f *Saver) RecordsUnchanged() bool { return true }

// Save writes p's body to its file (temporary file, then rename), its
// modification time the fetch time. A revisit's changed body (Visit > 0)
// first keeps the file it replaces as an earlier version (keepVersion);
// an unchanged revisit writes no file, only its manifest line.
func (f *Saver) Save(ctx context.Context, p *saver.Page) error {
	if err := saver.CheckPage(p); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return saver.ErrClosed
	}
	lines, err := f.responseLines(p)
	if err != nil {
		return err
	}
	want := f.Path(p)
	rec := manifestRecord{Key: p.Key, Path: want, URL: p.URL, Status: p.Status, ContentType: p.ContentType,
		Fetched: p.FetchedAt, Headers: storekit.MetaHeaders(p), Labels: p.Labels, Visit: p.Visit, Unchanged: p.Unchanged}
	var captured []string
	if p.Failed {
		rec.Kind, rec.Location = "failed", p.Header.Get("Location")
	}
	if !p.Unchanged && !p.Failed {
		body := f.converted(p, f.selfPath(want))
		rec.Converted = f.convert != nil && !bytes.Equal(body, p.Body)
		rel, replaced, ver, err := f.place(want, body, p)
		if err != nil {
			return fmt.Errorf("file saver: save %q: %w", p.Key, err)
		}
		rec.Path, rec.Size, rec.Previous, rec.Pruned = rel, len(body), ver.previous, ver.pruned
		if rec.Captures, captured, err = f.saveCaptures(rel, p); err != nil {
			return fmt.Errorf("file saver: save the copies of %q: %w", p.Key, err)
		}
		if f.mirror {
			rec.Aliases = naming.Aliases(p.Key, rel)
		}
		if replaced && len(rec.Aliases) > 0 {
			f.log.Warn("file saver: a page replaced a file that other URLs share; the file now holds this page",
				"key", p.Key, "path", rel, "aliases", rec.Aliases)
		}
	}
	if !utf8.ValidString(p.Key) {
		rec.KeyBytes = []byte(p.Key)
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("file saver: manifest record of %q: %w", p.Key, err)
	}
	f.mu.Lock()
	if !p.Unchanged && !p.Failed {
		f.files[rec.Path] = struct{}{}
	}
	for _, c := range captured {
		f.files[c] = struct{}{}
	}
	f.records = append(append(append(f.records, lines...), line...), '\n')
	f.mu.Unlock()
	return nil
}

// place writes body to rel atomically and returns where it went: rel, or
// rel/index.html when rel is a directory; whether it replaced an
// index.html file (the only names URLs share); and, for a revisit, the
// earlier version it kept.
func (f *Saver) place(rel string, body []byte, p *saver.Page) (string, bool, fileVersion, error) {
	var ver fileVersion
	tmp := filepath.Join(f.tmpDir, strconv.FormatUint(f.tmpSeq.Add(1), 10))
	if err := disk.WriteNew(tmp, body); err != nil {
		return "", false, ver, err
	}
	if !p.FetchedAt.IsZero() {
		// The fetch time names the file's version once a revisit replaces it.
		if err := os.Chtimes(tmp, p.FetchedAt, p.FetchedAt); err != nil {
			os.Remove(tmp)
			return "", false, ver, err
		}
	}
	// A few rounds at most: each fixes one conflict (a file in the way of a
	// directory, a directory where the file should go).
	for attempt := 0; attempt < 8; attempt++ {
		full := filepath.Join(f.root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			if !errors.Is(err, syscall.ENOTDIR) && !errors.Is(err, fs.ErrExist) {
				os.Remove(tmp)
				return "", false, ver, err
			}
			if err := f.fileToDir(rel); err != nil {
				os.Remove(tmp)
				return "", false, ver, err
			}
			continue
		}
		replaced := false
		if strings.HasPrefix(path.Base(rel), "index.html") {
			st, err := os.Lstat(full)
			replaced = err == nil && st.Mode().IsRegular()
		}
		if p.Visit > 0 && f.keep > 1 {
			v, err := f.keepVersion(rel, full, body)
			if err != nil {
				os.Remove(tmp)
				return "", false, ver, err
			}
			ver = v
		}
		err := os.Rename(tmp, full)
		if err == nil {
			return rel, replaced, ver, nil
		}
		if st, serr := os.Lstat(full); serr == nil && st.IsDir() {
			rel += "/index.html"
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			os.Remove(tmp)
			return "", false, ver, err
		}
		// A concurrent fix-up moved a parent: try again.
	}
	os.Remove(tmp)
	return "", false, ver, fmt.Errorf("path %q keeps changing under concurrent saves", rel)
}

// renameNoReplace moves from to to unless to exists: then to is a newer
// copy (saved after from was moved aside) and from is dropped.
func renameNoReplace(from, to string) error {
	err := os.Link(from, to)
	switch {
	case err == nil || errors.Is(err, fs.ErrExist):
		return os.Remove(from)
	case errors.Is(err, fs.ErrNotExist):
		return err
	default: // no hard links on this file system
		return os.Rename(from, to)
	}
}

// fileToDir turns every ancestor of rel that is a regular file into a
// directory holding that file as index.html.
func (f *Saver) fileToDir(rel string) error {
	f.moveMu.Lock()
	defer f.moveMu.Unlock()
	elems := strings.Split(rel, "/")
	for i := 1; i < len(elems); i++ {
		prefix := strings.Join(elems[:i], "/")
		p := filepath.Join(f.root, filepath.FromSlash(prefix))
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if st.IsDir() {
			continue
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is neither a file nor a directory", p)
		}
		tmp := filepath.Join(f.tmpDir, "move-"+strconv.FormatUint(f.tmpSeq.Add(1), 10))
		if err := os.Rename(p, tmp); err != nil {
			return err
		}
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			os.Rename(tmp, p) // put the page back where it was
			return err
		}
		if st, err := os.Lstat(p); err == nil && !st.IsDir() {
			// A concurrent save of the same page renamed a newer copy into
			// p meanwhile: drop the older one and move that.
			os.Remove(tmp)
			i--
			continue
		}
		if err := renameNoReplace(tmp, filepath.Join(p, "index.html")); err != nil {
			return err
		}
		f.mu.Lock()
		f.files[prefix+"/index.html"] = struct{}{}
		f.mu.Unlock()
	}
	return nil
}
