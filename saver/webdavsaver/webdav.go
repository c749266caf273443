// Package webdavsaver stores each page as a file on a WebDAV server
// (Nextcloud, ownCloud, Apache mod_dav, nginx dav, rclone serve webdav):
// its body, its metadata beside it as JSON and its captures, each with an
// HTTP PUT, the missing collections made with MKCOL. A PUT replaces the
// file, so a page keeps its newest version only.
package webdavsaver

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/naming"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// Defaults of Config's zero fields.
const (
	DefaultName        = "{crawl}/{host}/{sha256}"
	DefaultTimeout     = 30 * time.Second
	DefaultConcurrency = 8
)

// maxHeld bounds the bytes of failed uploads kept for the next Flush:
// past it, Save refuses new pages until the server takes the old ones.
const maxHeld = 256 << 20

// Config configures the WebDAV saver.
type Config struct {
	// URL is the collection pages go under, http:// or https://; a
	// user:password in it is sent as Basic authentication.
	URL string
	// Name is the name template of a page, relative to URL; default
	// DefaultName ({sha256} of the item, so a re-save replaces its file).
	Name        string
	Timeout     time.Duration // each request's; default DefaultTimeout
	Concurrency int           // pages uploading at once; default DefaultConcurrency
	Crawl       string
	Worker      string
	Logger      *slog.Logger // nil: slog.Default()
}

// Saver uploads each page (captures, body, then metadata), Concurrency
// pages at a time. Save returns once the upload has started; Flush waits
// for every upload started before it and returns an error if any failed.
// Failed uploads are kept and tried again by the next Flush, so a Flush
// that returns nil means every page saved before it is on the server.
// Uploads of one name run in the order of their Saves: the last one wins.
type Saver struct {
	dav    *client
	tmpl   *naming.Template
	crawl  string
	worker string
	sem    chan struct{}
	ctx    context.Context // uploads outlive the Save that started them
	cancel context.CancelFunc

	mu     sync.Mutex
	newest map[string]*upload // by name: the last upload, until it succeeds
	held   int64              // bytes of failed uploads kept in newest
	closed bool
}

// upload is the PUTs of one page, in order. prev is the upload of the
// same name before it, which must end first. err and ended are set under
// Saver.mu before done is closed; reported and held are under Saver.mu.
type upload struct {
	name     string
	puts     []put
	size     int64
	prev     *upload
	done     chan struct{}
	ended    bool
	err      error
	reported bool // a Flush has returned err
	held     bool // counted in Saver.held
}

type put struct {
	name  string
	ctype string
	data  []byte
}

// New checks cfg and that the server answers for the collection and
// takes the credentials (PROPFIND, Depth 0); it writes nothing.
func New(ctx context.Context, cfg Config) (*Saver, error) {
	tmpl, err := naming.Parse("saver.name", cmp.Or(cfg.Name, DefaultName), saver.Placeholders)
	if err != nil {
		return nil, err
	}
	conc := cfg.Concurrency
	if conc <= 0 {
		conc = DefaultConcurrency
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dav, err := newClient(cfg.URL, timeout, conc)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	lists, err := dav.probe(ctx)
	if err != nil {
		dav.hc.CloseIdleConnections()
		return nil, fmt.Errorf("webdav saver: %w", err)
	}
	if !lists {
		log.Warn("webdav saver: the server answers no PROPFIND; pages are saved, but extract --from cannot list them", "url", dav.String())
	}
	if dav.auth && strings.HasPrefix(dav.origin, "http:") {
		log.Warn("webdav saver: saver.url is http://, so the password crosses the network unencrypted", "url", dav.String())
	}
	s := &Saver{dav: dav, tmpl: tmpl, crawl: cfg.Crawl, worker: cfg.Worker, sem: make(chan struct{}, conc),
		newest: map[string]*upload{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Name returns the name of p, relative to the saver's URL.
func (s *Saver) Name(p *saver.Page) string {
	return s.tmpl.Render(naming.PageVars(p, s.crawl, s.worker))
}

// Save starts the upload of p, waiting for a free slot first. A 304 and
// a failed page (Page.Unchanged, Page.Failed) store nothing.
func (s *Saver) Save(ctx context.Context, p *saver.Page) error {
	if err := saver.CheckPage(p); err != nil {
		return err
	}
	if p.Unchanged || p.Failed {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return saver.ErrClosed
		}
		return nil
	}
	name := s.Name(p)
	puts, size, err := pagePuts(name, p)
	if err != nil {
		return fmt.Errorf("webdav saver: save %q: %w", p.Key, err)
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		<-s.sem
		return saver.ErrClosed
	}
	if s.held > maxHeld {
		<-s.sem
		return fmt.Errorf("webdav saver: save %q: %d bytes of failed uploads wait for the server; not starting more", p.Key, s.held)
	}
	s.startLocked(&upload{name: name, puts: puts, size: size})
	return nil
}

// pagePuts are p's PUTs: its captures, its body, then its metadata,
// which makes it a page for a reader once the rest is there.
func pagePuts(name string, p *saver.Page) ([]put, int64, error) {
	sum := sha256.Sum256(p.Body)
	m := Meta{Name: name, Key: p.Key, URL: p.URL, Status: p.Status, ContentType: p.ContentType,
		Fetched: p.FetchedAt, Headers: storekit.MetaHeaders(p), Labels: p.Labels, Visit: p.Visit,
		Size: len(p.Body), SHA256: hex.EncodeToString(sum[:])}
	if !utf8.ValidString(p.Key) {
		m.KeyBytes = []byte(p.Key)
	}
	var puts []put
	size := int64(len(p.Body))
	for _, kind := range saver.CaptureKinds {
		for _, c := range p.Captures {
			if c.Kind != kind {
				continue
			}
			cn := CaptureName(name, kind)
			puts = append(puts, put{name: cn, ctype: saver.CaptureType(kind), data: bytes.Clone(c.Data)})
			size += int64(len(c.Data))
			if m.Captures == nil {
				m.Captures = map[string]string{}
			}
			m.Captures[kind] = cn
		}
	}
	meta, err := json.Marshal(m)
	if err != nil {
		return nil, 0, fmt.Errorf("metadata: %w", err)
	}
	ctype := p.ContentType
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	body := bytes.Clone(p.Body)
	if body == nil {
		body = []byte{}
	}
	puts = append(puts, put{name: name, ctype: ctype, data: body},
		put{name: MetaName(name), ctype: "application/json", data: meta})
	return puts, size + int64(len(meta)), nil
}

// startLocked runs u in the background after the upload of its name
// before it. The caller holds s.mu and a slot of s.sem, which u frees.
func (s *Saver) startLocked(u *upload) {
	u.done = make(chan struct{})
	if prev := s.newest[u.name]; prev != nil {
		u.prev = prev
		if prev.held { // superseded: its bytes are no longer kept for a retry
			prev.held = false
			s.held -= prev.size
		}
	}
	s.newest[u.name] = u
	go s.run(u)
}

func (s *Saver) run(u *upload) {
	defer func() { <-s.sem }()
	if u.prev != nil {
		<-u.prev.done
		u.prev = nil
	}
	var err error
	for _, p := range u.puts {
		if err = s.dav.put(s.ctx, p.name, p.ctype, p.data); err != nil {
			break
		}
	}
	s.mu.Lock()
	u.ended, u.err = true, err
	if s.newest[u.name] == u {
		if err == nil {
			delete(s.newest, u.name)
		} else {
			u.held = true
			s.held += u.size
		}
	}
	s.mu.Unlock()
	close(u.done)
}

// Flush tries again the uploads whose failure an earlier Flush returned,
// then waits for every upload started before it.
func (s *Saver) Flush(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return saver.ErrClosed
	}
	return s.flush(ctx)
}

func (s *Saver) flush(ctx context.Context) error {
	s.mu.Lock()
	names := slices.Collect(maps.Keys(s.newest))
	s.mu.Unlock()
	for _, name := range names {
		if err := s.retry(ctx, name); err != nil {
			return err
		}
	}
	var errs []error
	failed := 0
	for _, name := range names {
		err := s.wait(ctx, name)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if failed++; len(errs) < 3 {
				errs = append(errs, err)
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("webdav saver: %d page(s) not saved, kept for the next Flush: %w", failed, errors.Join(errs...))
	}
	return nil
}

// retry starts the newest upload of name again if a Flush has returned
// its failure.
func (s *Saver) retry(ctx context.Context, name string) error {
	s.mu.Lock()
	u := s.newest[name]
	failed := u != nil && u.reported
	s.mu.Unlock()
	if !failed {
		return nil
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.newest[name] != u { // a Save or another Flush started a newer one
		<-s.sem
		return nil
	}
	s.startLocked(&upload{name: name, puts: u.puts, size: u.size})
	return nil
}

// wait waits until the newest upload of name has ended, and returns its
// error; nil once the name has no upload left.
func (s *Saver) wait(ctx context.Context, name string) error {
	for {
		s.mu.Lock()
		u := s.newest[name]
		s.mu.Unlock()
		if u == nil {
			return nil
		}
		select {
		case <-u.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.mu.Lock()
		still := s.newest[name] == u
		u.reported = still
		s.mu.Unlock()
		if still {
			return fmt.Errorf("save %q: %w", name, u.err)
		}
	}
}

// Close waits for the uploads (trying failed ones again, as Flush does)
// and stops.
func (s *Saver) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err := s.flush(ctx)
	s.cancel()
	s.dav.hc.CloseIdleConnections()
	return err
}
