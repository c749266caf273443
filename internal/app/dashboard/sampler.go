package dashboard

import (
	"context"
	"encoding/json"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// sample is the tracker's counters at one instant.
type sample struct {
	at                  time.Time
	done, failed, bytes int64
}

// ring keeps the last samples (an hour of them): the chart and the rates
// come from it, never from the tracker.
type ring struct {
	buf   []sample
	start int // index of the oldest
	n     int
}

func newRing(size int) ring { return ring{buf: make([]sample, max(size, 2))} }

func (r *ring) add(s sample) {
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = s
		r.n++
		return
	}
	r.buf[r.start] = s
	r.start = (r.start + 1) % len(r.buf)
}

// at returns the i-th sample, oldest first.
func (r *ring) at(i int) sample { return r.buf[(r.start+i)%len(r.buf)] }

// rate is pages done per second between the newest sample and the one
// window before it (or the oldest); 0 with fewer than two samples.
func (r *ring) rate(window time.Duration) float64 {
	if r.n < 2 {
		return 0
	}
	last := r.at(r.n - 1)
	from := r.at(0)
	for i := r.n - 2; i >= 0; i-- {
		if s := r.at(i); last.at.Sub(s.at) >= window {
			from = s
			break
		}
	}
	return perSecond(from, last)
}

func perSecond(from, to sample) float64 {
	dt := to.at.Sub(from.at).Seconds()
	if dt <= 0 {
		return 0
	}
	return float64(max(to.done-from.done, 0)) / dt
}

// series is the throughput chart: pages/s per step over the ring, as
// [unix seconds, pages/s] points.
func (r *ring) series(step int) [][2]float64 {
	out := make([][2]float64, 0, r.n/step+1)
	for i := (r.n-1)%step + step; i < r.n; i += step { // the last point is now
		a, b := r.at(i-step), r.at(i)
		out = append(out, [2]float64{float64(b.at.Unix()), round1(perSecond(a, b))})
	}
	return out
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

// Snapshot is what every page receives each Interval (GET /api/state, and
// each event of /api/events).
type Snapshot struct {
	At       time.Time     `json:"at"`
	Crawl    string        `json:"crawl"`
	ReadOnly bool          `json:"read_only"`
	Stats    tracker.Stats `json:"stats"`
	// RateNow is pages/s over the last 5 s (what drops to 0 on a pause),
	// RateMinute over the last minute, RateStart since the dashboard
	// started (its first sample).
	RateNow    float64   `json:"rate_now"`
	RateMinute float64   `json:"rate_minute"`
	RateStart  float64   `json:"rate_start"`
	Since      time.Time `json:"since"`
	// ETA is the seconds left at RateMinute; -1 when unknown.
	ETA     float64      `json:"eta"`
	Workers []workerView `json:"workers"`
	Series  [][2]float64 `json:"series"` // the last hour, 10-sample steps
	// Records are the crawl's records by rule (Config.Records); absent
	// without a source.
	Records *recordsView `json:"records,omitempty"`
	// Proxies are the proxies in quarantine (Config.Proxies); absent
	// without a source.
	Proxies *proxiesView `json:"proxies,omitempty"`
	Error   string       `json:"error,omitempty"`
}

// workerView is one worker as the workers table shows it.
type workerView struct {
	tracker.WorkerStats
	Dead bool `json:"dead"`
	// State is alive, dead, or how it exited: finished or stopped (shown
	// apart from dead: it ended cleanly and holds nothing).
	State string  `json:"state"`
	Rate  float64 `json:"rate"` // pages/s over its last 10 samples
}

const rateWindowNow = 5 * time.Second

// tick reads the tracker once and hands the snapshot to every open page.
func (s *Server) tick(ctx context.Context, now time.Time) {
	cctx, cancel := context.WithTimeout(ctx, max(s.cfg.Interval, 2*time.Second))
	defer cancel()
	snap := Snapshot{At: now.UTC(), Crawl: s.cfg.Crawl, ReadOnly: s.cfg.ReadOnly, ETA: -1, Workers: []workerView{}}
	st, err := s.cfg.Inspector.Stats(cctx)
	var ws []tracker.WorkerStats
	if err == nil {
		ws, err = s.cfg.Inspector.Workers(cctx)
	}
	snap.Records = s.records(cctx, now)
	snap.Proxies = s.proxies(cctx)
	if ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	if err != nil {
		snap.Error = s.cfg.Redact(err.Error())
	} else {
		snap.Stats = st
		s.samples.add(sample{at: now, done: st.Done, failed: st.Failed, bytes: st.Bytes})
		snap.Workers = s.workerViews(ws, now)
	}
	r := &s.samples
	snap.RateNow, snap.RateMinute = round1(r.rate(rateWindowNow)), round1(r.rate(time.Minute))
	if r.n > 0 {
		snap.Since = r.at(0).at.UTC()
		snap.RateStart = round1(r.rate(time.Duration(1 << 62)))
	}
	if left := st.Pending + st.Leased + st.Delayed; err == nil && snap.RateMinute > 0 {
		snap.ETA = float64(int64(float64(left) / snap.RateMinute))
	} else if err == nil && left == 0 && st.Added > 0 {
		snap.ETA = 0
	}
	// At most ~360 points: a step of one sample while the ring is young,
	// 10 once it holds the hour.
	snap.Series = r.series(max(1, (r.n+359)/360))
	b, jerr := json.Marshal(snap)
	if jerr == nil {
		s.snap = b
		for ch := range s.subs {
			select { // a slow page skips a snapshot rather than holding the others
			case ch <- b:
			default:
			}
		}
	}
	s.mu.Unlock()
}

// workerViews adds to each worker its state and its rate; the
// caller holds s.mu.
func (s *Server) workerViews(ws []tracker.WorkerStats, now time.Time) []workerView {
	out := make([]workerView, 0, len(ws))
	seen := make(map[string]bool, len(ws))
	for _, w := range ws {
		seen[w.Name] = true
		hist := append(s.perW[w.Name], sample{at: now, done: w.Done})
		if len(hist) > 10 {
			hist = hist[len(hist)-10:]
		}
		s.perW[w.Name] = hist
		out = append(out, workerView{WorkerStats: w, Dead: w.Dead(now), State: w.State(now),
			Rate: round1(perSecond(hist[0], hist[len(hist)-1]))})
	}
	for name := range s.perW { // forgotten by the tracker: forget it too
		if !seen[name] {
			delete(s.perW, name)
		}
	}
	return out
}
