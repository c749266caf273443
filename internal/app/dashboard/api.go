package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// deadLetter is one row of the dead letters view.
type deadLetter struct {
	Key      string    `json:"key"`
	Attempts int       `json:"attempts"`
	Reason   string    `json:"reason"`
	At       time.Time `json:"at"`
	Depth    int       `json:"depth"`
	Labels   []string  `json:"labels,omitempty"`
}

type deadLetters struct {
	Items []deadLetter `json:"items"`
	Next  string       `json:"next,omitempty"`
	Total int64        `json:"total"`
}

// maxPage bounds a page of dead letters (and so what one request costs).
const maxPage = 200

// failed answers one page of dead letters: ?match=&cursor=&limit=.
func (s *Server) failed(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPage {
			s.fail(w, fmt.Errorf("%w: limit %q: want 1..%d", errBadRequest, v, maxPage))
			return
		}
		limit = n
	}
	fq := tracker.FailedQuery{Match: q.Get("match"), Cursor: q.Get("cursor"), Limit: limit}
	pg, err := s.cfg.Inspector.FailedPage(r.Context(), fq)
	if errors.Is(err, errors.ErrUnsupported) && fq.Match == "" && fq.Cursor == "" {
		// An engine without pages yet still lists the first ones.
		pg, err = s.firstFailed(r.Context(), limit)
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	out := deadLetters{Items: make([]deadLetter, 0, len(pg.Items)), Next: pg.Next, Total: pg.Total}
	for _, it := range pg.Items {
		out.Items = append(out.Items, deadLetter{Key: s.cfg.Redact(it.Key), Attempts: it.Attempts,
			Reason: s.cfg.Redact(tracker.OneLine(it.Reason)), At: it.At.UTC(), Depth: it.Depth, Labels: it.Labels})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) firstFailed(ctx context.Context, limit int) (tracker.FailedPage, error) {
	items, err := s.cfg.Inspector.Failed(ctx, limit)
	if err != nil {
		return tracker.FailedPage{}, err
	}
	st, err := s.cfg.Inspector.Stats(ctx)
	if err != nil {
		return tracker.FailedPage{}, err
	}
	return tracker.FailedPage{Items: items, Total: st.Failed}, nil
}

// hostCache shares one Hosts call among the pages for hostsTTL: it reads
// bounded samples, which is more than Stats.
type hostCache struct {
	at    time.Time
	n     int
	hosts []tracker.HostStats
}

const hostsTTL = 2 * time.Second

// hostsView answers the busiest hosts: ?n= (default 20, at most 100).
func (s *Server) hostsView(w http.ResponseWriter, r *http.Request) {
	n := 20
	if v := r.URL.Query().Get("n"); v != "" {
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 || k > 100 {
			s.fail(w, fmt.Errorf("%w: n %q: want 1..100", errBadRequest, v))
			return
		}
		n = k
	}
	s.mu.Lock()
	c := s.hosts
	s.mu.Unlock()
	if c.n < n || time.Since(c.at) > hostsTTL {
		hs, err := s.cfg.Inspector.Hosts(r.Context(), n)
		if err != nil {
			s.fail(w, err)
			return
		}
		c = hostCache{at: time.Now(), n: n, hosts: hs}
		s.mu.Lock()
		s.hosts = c
		s.mu.Unlock()
	}
	hs := c.hosts[:min(n, len(c.hosts))]
	type hostView struct {
		tracker.HostStats
		DelayMS float64 `json:"delay_ms"`
	}
	out := make([]hostView, 0, len(hs))
	for _, h := range hs {
		out = append(out, hostView{HostStats: h, DelayMS: float64(h.Delay.Microseconds()) / 1000})
	}
	writeJSON(w, http.StatusOK, out)
}

// lookup answers one item's state: ?key=.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		s.fail(w, fmt.Errorf("%w: give the URL or ID to look up", errBadRequest))
		return
	}
	if s.cfg.Normalize != nil {
		k, err := s.cfg.Normalize(key)
		if err != nil {
			s.fail(w, fmt.Errorf("%w: %w", errBadRequest, err))
			return
		}
		key = k
	}
	st, err := s.cfg.Inspector.Lookup(r.Context(), key)
	if err != nil {
		s.fail(w, err)
		return
	}
	st.Key, st.Reason = s.cfg.Redact(st.Key), s.cfg.Redact(st.Reason)
	writeJSON(w, http.StatusOK, st)
}

// who is where an action came from, for the log and for Pause's by.
type who struct {
	Remote    string // the peer's IP
	UserAgent string
	Token     bool // came with the token (the only user a token names)
}

func (w who) by() string { return "dashboard@" + w.Remote }

// action wraps an operator's action: refused when read-only, POST with the
// CSRF token only, logged with who did it and from where.
func (s *Server) action(do func(context.Context, who, []byte) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.ReadOnly {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "read-only dashboard: actions are off"})
			return
		}
		if !s.csrfOK(r) {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "missing or wrong CSRF token: reload the page"})
			return
		}
		body, err := readBody(w, r)
		if err != nil {
			s.fail(w, err)
			return
		}
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		ua := r.UserAgent()
		if len(ua) > 200 {
			ua = ua[:200]
		}
		who := who{Remote: host, UserAgent: tracker.OneLine(ua), Token: s.cfg.Token != ""}
		res, err := do(r.Context(), who, body)
		if err != nil {
			s.log.Warn("dashboard action refused", "action", r.URL.Path, "by", who.by(), "remote", r.RemoteAddr,
				"user_agent", who.UserAgent, "token", who.Token, "err", s.cfg.Redact(err.Error()))
			s.fail(w, err)
			return
		}
		// Warn, as the CLI's pause and resume log: a fleet's usual
		// log.level shows who steered it.
		s.log.Warn("dashboard action", "action", r.URL.Path, "by", who.by(), "remote", r.RemoteAddr,
			"user_agent", who.UserAgent, "token", who.Token, "result", res)
		writeJSON(w, http.StatusOK, res)
	}
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("%w: body: %v", errBadRequest, err)
	}
	return b, nil
}

func decode(body []byte, v any) error {
	if len(body) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %v", errBadRequest, err)
	}
	return nil
}

type moved struct {
	Moved int `json:"moved"`
}

// maxKeys bounds the dead letters one requeue names (a page's worth).
const maxKeys = maxPage

// requeue puts dead letters back: {"keys": [...]} these, or {"all": true,
// "match": "..."} all that match (all of them without match).
func (s *Server) requeue(ctx context.Context, _ who, body []byte) (any, error) {
	var req struct {
		Keys  []string `json:"keys"`
		All   bool     `json:"all"`
		Match string   `json:"match"`
	}
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	opt := tracker.RequeueOptions{Failed: true}
	switch {
	case len(req.Keys) > 0 && req.All:
		return nil, fmt.Errorf("%w: keys and all are exclusive", errBadRequest)
	case len(req.Keys) > maxKeys:
		return nil, fmt.Errorf("%w: %d keys: at most %d at once", errBadRequest, len(req.Keys), maxKeys)
	case len(req.Keys) > 0:
		opt.Keys = req.Keys
	case req.All:
		opt.Match = req.Match
	default:
		return nil, fmt.Errorf("%w: name the dead letters (keys) or ask for all matching (all)", errBadRequest)
	}
	n, err := s.cfg.Inspector.Requeue(ctx, opt)
	return moved{n}, err
}

// requeueWorker puts every lease of one (dead) worker back: {"worker": name}.
func (s *Server) requeueWorker(ctx context.Context, _ who, body []byte) (any, error) {
	var req struct {
		Worker string `json:"worker"`
	}
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if err := tracker.ValidateWorker(req.Worker); err != nil {
		return nil, err
	}
	n, err := s.cfg.Inspector.Requeue(ctx, tracker.RequeueOptions{Worker: req.Worker})
	return moved{n}, err
}

func (s *Server) pause(ctx context.Context, w who, _ []byte) (any, error) {
	return map[string]bool{"paused": true}, s.cfg.Inspector.Pause(ctx, w.by())
}

func (s *Server) resume(ctx context.Context, w who, _ []byte) (any, error) {
	return map[string]bool{"paused": false}, s.cfg.Inspector.Resume(ctx, w.by())
}
