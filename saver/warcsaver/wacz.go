package warcsaver

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/net/html"

	"github.com/distscrape/distscrape/saver/internal/disk"
)

// WACZVersion is the wacz_version of the packages WriteWACZ makes: 1.1.1,
// the published Webrecorder Recommendation (1.2.0 is a draft with no
// official standing, and readers such as py-wacz check the key).
const WACZVersion = "1.1.1"

// ErrNoWARC says a directory holds no .warc.gz file to package.
var ErrNoWARC = errors.New("warc saver: no .warc.gz file to package")

// ErrStillWritten says a live writer is still writing a file of the
// directory: package it once the crawl (every worker) has ended.
var ErrStillWritten = errors.New("warc saver: a live writer is still writing")

// WACZOptions tunes WriteWACZ.
type WACZOptions struct {
	Title    string       // datapackage.json "title"; default the directory's name
	Software string       // datapackage.json "software"; default "distscrape"
	Logger   *slog.Logger // repairs and skipped tails; default slog.Default()
	// Text, when set, gives a page's text for pages/pages.jsonl: the main
	// text the crawl's extraction rules take from it ("" when they take
	// none). It gets the page's URL and HTML, up to waczTextMax bytes.
	Text func(ctx context.Context, url string, html []byte) string
}

// WACZStats says what a package holds.
type WACZStats struct {
	WARCs, Records, Pages int
	Bytes                 int64 // of the package
}

// waczPageMax bounds what is read of an HTML payload for its title, and
// waczTextMax for its text (WACZOptions.Text).
const (
	waczPageMax = 64 << 10
	waczTextMax = 4 << 20
)

// WriteWACZ packages the .warc.gz files of dir as a WACZ file at out
// (written beside it, fsynced, then renamed): the files STORED under
// archive/ (readers seek into them by offset), indexes/index.cdxj (every
// response and revisit, sorted, offsets into the stored files),
// pages/pages.jsonl (each URL's first HTML page with status 200, its
// capture time and title), datapackage.json (every file's sha256 and size)
// and datapackage-digest.json (datapackage.json's sha256). Dead writers'
// files are repaired first; a file a live writer still writes is refused
// (ErrStillWritten): in a fleet, run it once every worker has ended.
func WriteWACZ(ctx context.Context, dir, out string, opts WACZOptions) (WACZStats, error) {
	var st WACZStats
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Software == "" {
		opts.Software = "distscrape"
	}
	if opts.Title == "" {
		opts.Title = filepath.Base(filepath.Clean(dir))
	}
	if _, err := Repair(dir, false, opts.Logger); err != nil {
		return st, err
	}
	live, err := liveFiles(dir)
	if err != nil {
		return st, err
	}
	warcs, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	sort.Strings(warcs)
	if len(warcs) == 0 {
		return st, fmt.Errorf("%w in %s", ErrNoWARC, dir)
	}
	for _, w := range warcs {
		if live[filepath.Base(w)] {
			return st, fmt.Errorf("%w %s", ErrStillWritten, w)
		}
	}
	tmp, err := waczTemp(out, opts.Logger)
	if err != nil {
		return st, fmt.Errorf("wacz: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	p := &packer{zw: zip.NewWriter(tmp), seen: map[string]bool{}, ctx: ctx, text: opts.Text}
	for _, w := range warcs {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if err := p.addWARC(w, opts.Logger); err != nil {
			return st, fmt.Errorf("wacz: %s: %w", filepath.Base(w), err)
		}
	}
	if err := p.finish(opts); err != nil {
		return st, fmt.Errorf("wacz: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return st, err
	}
	if err := tmp.Sync(); err != nil {
		return st, err
	}
	if err := tmp.Close(); err != nil {
		return st, err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return st, fmt.Errorf("wacz: %w", err)
	}
	if err := disk.FsyncPath(filepath.Dir(out)); err != nil {
		return st, err
	}
	fi, err := os.Stat(out)
	if err != nil {
		return st, err
	}
	return WACZStats{WARCs: len(warcs), Records: p.records, Pages: len(p.pages), Bytes: fi.Size()}, nil
}

// waczTemp creates the temporary file out is written as, beside it and
// locked (flock) while this process lives: ".<out's name>.tmp-<random>".
// The temporary files of out a killed run left (unlocked) are removed
// first; a live run's are left alone.
func waczTemp(out string, log *slog.Logger) (*os.File, error) {
	dir, prefix := filepath.Dir(out), "."+filepath.Base(out)+".tmp-"
	if disk.LockSupported {
		stale, _ := filepath.Glob(filepath.Join(dir, globEscape(prefix)+"*"))
		for _, p := range stale {
			f, ok, err := disk.TryLock(p)
			if err != nil || !ok {
				continue // a live run's, or not ours to judge
			}
			if err := os.Remove(p); err == nil {
				log.Info("wacz: removed the temporary file of a run that was killed", "file", p)
			}
			f.Close()
		}
	}
	for range 8 {
		var b [8]byte
		rand.Read(b[:])
		name := filepath.Join(dir, prefix+hex.EncodeToString(b[:]))
		if _, err := os.Lstat(name); err == nil {
			continue
		}
		f, ok, err := disk.TryLock(name)
		if err != nil {
			return nil, err
		}
		if ok {
			return f, nil
		}
	}
	return nil, fmt.Errorf("no temporary file name free beside %s", out)
}

// globEscape escapes the glob metacharacters of a literal name part.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// liveFiles are the files live writers of dir are writing (after Repair,
// every writer directory left is a live one's).
func liveFiles(dir string) (map[string]bool, error) {
	live := map[string]bool{}
	root := filepath.Join(dir, TempDir)
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return live, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(root, e.Name()))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if name, ok := strings.CutPrefix(f.Name(), openPrefix); ok {
				live[name] = true
			}
		}
	}
	return live, nil
}

// packer builds a WACZ file.
type packer struct {
	ctx       context.Context
	text      func(ctx context.Context, url string, html []byte) string // WACZOptions.Text
	zw        *zip.Writer
	resources []waczResource
	cdx       []string
	pages     []waczPage
	seen      map[string]bool // page URLs
	records   int
}

type waczResource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Bytes int64  `json:"bytes"`
}

type waczPage struct {
	URL   string `json:"url"`
	TS    string `json:"ts"`
	Title string `json:"title,omitempty"`
	Text  string `json:"text,omitempty"`
}

// addWARC indexes a WARC file and stores its complete records.
func (p *packer) addWARC(path string, log *slog.Logger) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	name := filepath.Base(path)
	head := waczPageMax
	if p.text != nil {
		head = waczTextMax
	}
	good, err := scan(f, head, func(r *scanned) error {
		p.records++
		if r.typ != "response" && r.typ != "revisit" {
			return nil
		}
		e := entryOf(r)
		p.cdx = append(p.cdx, e.line(name))
		mime, _, _ := strings.Cut(r.mime, ";")
		if r.typ == "response" && r.status == 200 && !r.encoded && strings.EqualFold(strings.TrimSpace(mime), "text/html") && !p.seen[r.uri] {
			p.seen[r.uri] = true
			pg := waczPage{URL: r.uri, TS: r.date, Title: htmlTitle(r.head)}
			if p.text != nil {
				pg.Text = p.text(p.ctx, r.uri, r.head)
			}
			p.pages = append(p.pages, pg)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDamaged) {
		return err
	}
	if fi, serr := f.Stat(); serr == nil && good < fi.Size() {
		log.Warn("wacz: a file ends with no complete record; packaging its complete records only", "file", name,
			"bytes", fi.Size(), "complete", good, "err", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	hdr := &zip.FileHeader{Name: "archive/" + name, Method: zip.Store, Modified: fi.ModTime()}
	return p.add(hdr, io.LimitReader(f, good))
}

// add writes one member and lists it as a resource.
func (p *packer) add(hdr *zip.FileHeader, r io.Reader) error {
	w, err := p.zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), r)
	if err != nil {
		return err
	}
	p.resources = append(p.resources, waczResource{Name: filepath.Base(hdr.Name), Path: hdr.Name, Hash: sum(h), Bytes: n})
	return nil
}

func sum(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }

// finish writes the index, the pages, the data package and its digest.
func (p *packer) finish(opts WACZOptions) error {
	now := time.Now().UTC()
	sort.Strings(p.cdx)
	if err := p.add(&zip.FileHeader{Name: "indexes/index.cdxj", Method: zip.Deflate, Modified: now},
		strings.NewReader(strings.Join(p.cdx, ""))); err != nil {
		return err
	}
	var pages bytes.Buffer
	enc := json.NewEncoder(&pages)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]string{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"})
	for _, pg := range p.pages {
		enc.Encode(pg)
	}
	if err := p.add(&zip.FileHeader{Name: "pages/pages.jsonl", Method: zip.Deflate, Modified: now}, &pages); err != nil {
		return err
	}
	dp, err := json.MarshalIndent(struct {
		Profile     string         `json:"profile"`
		WACZVersion string         `json:"wacz_version"`
		Title       string         `json:"title"`
		Created     string         `json:"created"`
		Software    string         `json:"software"`
		Resources   []waczResource `json:"resources"`
	}{"data-package", WACZVersion, opts.Title, now.Format(time.RFC3339), opts.Software, p.resources}, "", "  ")
	if err != nil {
		return err
	}
	if err := p.add(&zip.FileHeader{Name: "datapackage.json", Method: zip.Deflate, Modified: now}, bytes.NewReader(dp)); err != nil {
		return err
	}
	digest, _ := json.MarshalIndent(map[string]string{"path": "datapackage.json", "hash": p.resources[len(p.resources)-1].Hash}, "", "  ")
	w, err := p.zw.CreateHeader(&zip.FileHeader{Name: "datapackage-digest.json", Method: zip.Deflate, Modified: now})
	if err != nil {
		return err
	}
	if _, err := w.Write(digest); err != nil {
		return err
	}
	return p.zw.Close()
}

// htmlTitle is the text of the first <title> in an HTML document's first
// bytes, spaces collapsed; "" when there is none.
func htmlTitle(doc []byte) string {
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken:
			if name, _ := z.TagName(); string(name) == "title" {
				if z.Next() == html.TextToken {
					return strings.Join(strings.Fields(html.UnescapeString(string(z.Text()))), " ")
				}
				return ""
			}
		}
	}
}
