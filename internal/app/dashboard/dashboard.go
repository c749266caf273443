// Package dashboard is the web UI of a crawl (`distscrape dashboard` and
// `crawl --dashboard`): live counts, rates and a throughput chart, the
// workers, the busiest hosts, the dead letters and one item's state, and the
// operator's actions (requeue, pause, resume) through the tracker's own
// Inspector, the code paths of the CLI.
//
// It sees tracker.Inspector only. Every view costs the tracker O(1) or
// O(page): one sampler per process reads Stats and Workers once per
// Interval and fans the result out to every open page over Server-Sent
// Events, so ten open pages cost what one does; hosts, dead letters and
// lookups are read when a page asks, one page at a time.
//
// Assets are embedded (HTML, CSS and plain JavaScript, no build step).
package dashboard

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

//go:embed assets
var assets embed.FS

var page = template.Must(template.ParseFS(assets, "assets/index.html"))

// DefaultInterval is how often the sampler reads the tracker and the pages
// update: the issue asks for at least once a second.
const DefaultInterval = time.Second

// Config is one dashboard.
type Config struct {
	Inspector tracker.Inspector
	Crawl     string
	// Token, when set, is required of every request (Authorization:
	// Bearer, or ?token= once, which sets a cookie). Empty: the dashboard
	// answers only to loopback host names (CheckListen makes sure it
	// listens on loopback only).
	Token string
	// ReadOnly hides every action and refuses them (403).
	ReadOnly bool
	// Redact hides secrets in what a page shows (dead letters' keys and
	// reasons, errors); nil shows them as they are.
	Redact func(string) string
	// Normalize turns what an operator typed into the item's key, as seed
	// and lookup do (a URL's host lower-cased...); nil keeps it as typed.
	Normalize func(string) (string, error)
	// Records, when set, counts the crawl's records by rule for the
	// overview (written and kept invalid, at most every 5 s).
	Records RecordCounts
	// Proxies, when set, lists the proxies in quarantine for the overview.
	Proxies ProxyQuarantine
	// Metrics, when set, is served at /metrics (behind the token).
	Metrics  http.Handler
	Interval time.Duration // default DefaultInterval
	Logger   *slog.Logger  // default slog.Default()
}

// Server serves one dashboard. Run samples the tracker; Handler serves the
// pages; both until Run's context ends.
type Server struct {
	cfg  Config
	log  *slog.Logger
	csrf string
	mux  *http.ServeMux

	mu      sync.Mutex
	samples ring
	perW    map[string][]sample // worker -> its last samples (rate)
	snap    []byte              // the last snapshot, JSON
	subs    map[chan []byte]struct{}
	hosts   hostCache
	recs    recordSampler
}

// New checks cfg and builds the server.
func New(cfg Config) (*Server, error) {
	if cfg.Inspector == nil {
		return nil, errors.New("dashboard: no Inspector")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Redact == nil {
		cfg.Redact = func(s string) string { return s }
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, csrf: hex.EncodeToString(b),
		samples: newRing(int(time.Hour / cfg.Interval)), perW: map[string][]sample{}, subs: map[chan []byte]struct{}{}}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	static, _ := fs.Sub(assets, "assets")
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.index)
	m.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	m.HandleFunc("GET /api/state", s.state)
	m.HandleFunc("GET /api/events", s.events)
	m.HandleFunc("GET /api/failed", s.failed)
	m.HandleFunc("GET /api/hosts", s.hostsView)
	m.HandleFunc("GET /api/lookup", s.lookup)
	m.HandleFunc("POST /api/requeue", s.action(s.requeue))
	m.HandleFunc("POST /api/requeue-worker", s.action(s.requeueWorker))
	m.HandleFunc("POST /api/pause", s.action(s.pause))
	m.HandleFunc("POST /api/resume", s.action(s.resume))
	if s.cfg.Metrics != nil {
		m.Handle("GET /metrics", s.cfg.Metrics)
	}
	s.mux = m
}

// Handler serves the dashboard: every request passes the token check first
// (but /healthz, which says nothing but "ok").
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY") // no click-jacking of the action buttons
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		if r.URL.Path == "/healthz" {
			h.Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write([]byte("ok\n"))
			return
		}
		if !s.authorized(w, r) {
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

// Serve serves the dashboard on ln and samples the tracker until ctx ends.
// The caller listens, so that an address in use is an error at start.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	go s.Run(ctx)
	go func() {
		<-ctx.Done()
		s.closeSubs() // ends the event streams, which Shutdown would wait for
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Run samples the tracker every Interval until ctx ends.
func (s *Server) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		s.tick(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Server) index(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	err := page.Execute(w, struct {
		Crawl, CSRF string
		ReadOnly    bool
		Interval    time.Duration
	}{s.cfg.Crawl, s.csrf, s.cfg.ReadOnly, s.cfg.Interval})
	if err != nil {
		s.log.Debug("dashboard: page", "err", err)
	}
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers an error as JSON, its message redacted; a call the tracker
// does not implement yet is 501 "not available".
func (s *Server) fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	msg := s.cfg.Redact(err.Error())
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		code, msg = http.StatusNotImplemented, "not available with this tracker (yet)"
	case errors.Is(err, tracker.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, tracker.ErrReadOnly):
		code = http.StatusForbidden
	case errors.Is(err, errBadRequest), errors.Is(err, tracker.ErrBadWorker), errors.Is(err, tracker.ErrInvalidArgument), errors.Is(err, tracker.ErrInvalidItem):
		code = http.StatusBadRequest
	}
	writeJSON(w, code, map[string]string{"error": msg})
}

var errBadRequest = errors.New("bad request")
