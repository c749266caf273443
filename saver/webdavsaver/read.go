package webdavsaver

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/naming"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// Walk reads back the pages of a crawl that the WebDAV saver stored: cfg's
// URL, Name template, Crawl and Timeout say where (Worker is not needed).
// It lists the collections under the longest one the template fixes
// (PROPFIND, Depth 1, one collection at a time), and reads each metadata
// file (MetaSuffix) and the body it names, in name order. A file that no
// metadata names (a first save cut short, someone else's file) is
// skipped and counted; an href listed outside its collection is refused.
func Walk(ctx context.Context, cfg Config, fn saver.WalkFunc) (saver.Walked, error) {
	var w saver.Walked
	if err := ctx.Err(); err != nil {
		return w, err
	}
	tmpl, err := naming.Parse("saver.name", cmp.Or(cfg.Name, DefaultName), saver.Placeholders)
	if err != nil {
		return w, err
	}
	dav, err := newClient(cfg.URL, cmp.Or(cfg.Timeout, DefaultTimeout), 2)
	if err != nil {
		return w, err
	}
	defer dav.hc.CloseIdleConnections()
	start := startDir(tmpl, cfg.Crawl)
	r := &walker{dav: dav, fn: fn, w: &w}
	err = r.dir(ctx, start)
	if errors.Is(err, errNoCollection) {
		return w, fmt.Errorf("webdav saver: no collection %q under %s: %w", start, dav, saver.ErrNotStore)
	}
	if err != nil {
		return w, fmt.Errorf("webdav saver: %w", err)
	}
	return w, nil
}

// startDir is the longest collection every name the template renders for
// crawl is in; "" for the URL's own.
func startDir(tmpl *naming.Template, crawl string) string {
	prefix, _, _ := strings.Cut(tmpl.Glob(crawl, func(s string) string { return s }), "*")
	i := strings.LastIndexByte(prefix, '/')
	if i < 0 {
		return ""
	}
	dir := strings.Trim(prefix[:i], "/")
	if dir == "" {
		return ""
	}
	return tmpl.CleanPath(dir)
}

type walker struct {
	dav *client
	fn  saver.WalkFunc
	w   *saver.Walked
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// dir reads the pages of the collection dir, then of those below it.
func (r *walker) dir(ctx context.Context, dir string) error {
	entries, refused, err := r.dav.list(ctx, dir)
	if err != nil {
		return err
	}
	for _, p := range refused {
		r.w.Refuse(p, "listed outside the collection "+r.dav.String()+escapePath(dir))
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	files := map[string]entry{}
	var dirs []string
	for _, e := range entries {
		if e.dir {
			dirs = append(dirs, e.name)
		} else {
			files[e.name] = e
		}
	}
	named := map[string]bool{}
	for _, e := range entries {
		if e.dir || !strings.HasSuffix(e.name, MetaSuffix) {
			continue
		}
		body, err := r.page(ctx, dir, e, files)
		if err != nil {
			return err
		}
		if body != "" {
			named[body] = true
		}
	}
	for name := range files {
		if !named[name] && !isSideFile(name) {
			r.w.Skipped++
		}
	}
	for _, d := range dirs {
		sub := join(dir, d)
		if len(sub) > naming.MaxPathLen {
			r.w.Refuse(sub, "deeper than any name the saver writes")
			continue
		}
		if err := r.dir(ctx, sub); err != nil && !errors.Is(err, errNoCollection) { // gone since listed
			return err
		}
	}
	return nil
}

// page reads the page whose metadata file is e, in dir, and passes it to
// fn. It returns the name of the body the metadata names in dir ("" when
// none); an error stops the walk.
func (r *walker) page(ctx context.Context, dir string, e entry, files map[string]entry) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	metaName := join(dir, e.name)
	b, err := r.get(ctx, metaName, e.size)
	if b == nil {
		return "", err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		r.w.Skipped++
		r.w.Warnings = append(r.w.Warnings, fmt.Sprintf("%s: unreadable metadata, skipped: %v", metaName, err))
		return "", nil
	}
	// The metadata must name the body beside it, not any other file.
	bodyName := path.Base(m.Name)
	if m.Name == "" || path.Dir(m.Name) != cmp.Or(dir, ".") || MetaName(m.Name) != metaName {
		r.w.Refuse(metaName, "its metadata names another file")
		return "", nil
	}
	be, ok := files[bodyName]
	if !ok {
		r.w.Skipped++
		r.w.Warnings = append(r.w.Warnings, metaName+": metadata without its page, skipped")
		return "", nil
	}
	body, err := r.get(ctx, m.Name, be.size)
	if body == nil {
		return bodyName, err
	}
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != m.SHA256 {
		r.w.Warnings = append(r.w.Warnings, m.Name+": the body is not the one its metadata describes (a save cut short); read as stored")
	}
	p := &saver.Page{Key: m.PageKey(), URL: m.URL, Status: m.Status, ContentType: m.ContentType,
		FetchedAt: m.Fetched, Body: body, Header: http.Header{}, Labels: m.Labels, Visit: m.Visit}
	for _, name := range saver.MetaHeaders {
		if v := m.Headers[strings.ToLower(name)]; v != "" {
			p.Header.Set(name, v)
		}
	}
	if p.ContentType != "" {
		p.Header.Set("Content-Type", p.ContentType)
	}
	r.w.Pages++
	return bodyName, r.fn(p)
}

// get reads the file name of the listed size (-1: unknown). A file over
// saver.MaxWalkBody is refused: nil and no error.
func (r *walker) get(ctx context.Context, name string, size int64) ([]byte, error) {
	if size > saver.MaxWalkBody {
		why, _ := storekit.Refusal(storekit.ErrTooLarge(size))
		r.w.Refuse(name, why)
		return nil, nil
	}
	b, err := r.dav.get(ctx, name)
	if why, ok := storekit.Refusal(err); ok {
		r.w.Refuse(name, why)
		return nil, nil
	}
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		r.w.Skipped++
		r.w.Warnings = append(r.w.Warnings, name+": gone since it was listed, skipped")
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
