// Package metrics exposes a worker's Prometheus metrics so that they add up
// across a fleet: every worker exports its own counters (pages by outcome and
// status class, bytes, items saved and failed, leases lost), which sum()
// totals; the crawl-wide gauges (items by state, workers, paused) come from
// the tracker's O(1) counters and are exported by one process only (the
// --crawl-metrics flag), so nothing is counted once per worker.
package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/tracker"
)

// StatsFunc reads the tracker's counters.
type StatsFunc func(context.Context) (tracker.Stats, error)

// Options say what one process exports.
type Options struct {
	Crawl, Worker string
	// Stats, when set, exports the crawl-wide gauges: set it in one process
	// of a fleet (every worker exporting them makes sum() count them once
	// per worker).
	Stats StatsFunc
	// Build is distscrape_build_info's labels.
	Version, Commit, GoVersion string
}

// Metrics is one process's registry. It implements manager.Observer.
type Metrics struct {
	reg                 *prometheus.Registry
	labels              prometheus.Labels
	pages               *prometheus.CounterVec
	bytes               prometheus.Counter
	fetchTime, waitTime prometheus.Histogram
	written, invalid    *prometheus.CounterVec // records, by rule
}

var _ manager.RecordObserver = (*Metrics)(nil)

// New registers the metrics of one worker of a crawl.
func New(o Options) *Metrics {
	labels := prometheus.Labels{"crawl": o.Crawl, "worker": o.Worker}
	m := &Metrics{
		reg:    prometheus.NewRegistry(),
		labels: labels,
		pages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "distscrape_pages_total", ConstLabels: labels,
			Help: "Items processed by this worker, by outcome (ok, retry, final) and HTTP status class (2xx ... 5xx; none: no response).",
		}, []string{"outcome", "class"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "distscrape_fetched_bytes_total", Help: "Body bytes fetched by this worker.", ConstLabels: labels,
		}),
		fetchTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "distscrape_fetch_seconds", Help: "The fetch of a page alone, from request to last body byte, redirects included; politeness waits excluded.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}),
		waitTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "distscrape_politeness_wait_seconds", Help: "Time a page waited for the host's and the client's limits (slots, rate, crawl-delay) before its fetch.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
	}
	m.written = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distscrape_records_written_total", ConstLabels: labels,
		Help: "Records this worker made durable in the records sink, by extract rule (invalid ones kept with on_invalid: keep included).",
	}, []string{"rule"})
	m.invalid = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distscrape_records_invalid_total", ConstLabels: labels,
		Help: "Records that failed validation on this worker, by extract rule: kept ones and those that failed their page.",
	}, []string{"rule"})
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "distscrape_build_info", Help: "The build of this process; always 1.",
		ConstLabels: prometheus.Labels{"version": o.Version, "commit": o.Commit, "goversion": o.GoVersion},
	})
	build.Set(1)
	m.reg.MustRegister(m.pages, m.bytes, m.fetchTime, m.waitTime, m.written, m.invalid, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if o.Stats != nil {
		m.reg.MustRegister(&crawlCollector{stats: o.Stats, crawl: o.Crawl})
	}
	return m
}

// ObserveFetch implements manager.Observer.
func (m *Metrics) ObserveFetch(o manager.Observation) {
	m.pages.WithLabelValues(o.Outcome, statusClass(o.Status)).Inc()
	m.bytes.Add(float64(o.Bytes))
	if o.Fetch > 0 {
		m.fetchTime.Observe(o.Fetch.Seconds())
		m.waitTime.Observe(o.Wait.Seconds())
	}
}

// ObserveRecords implements manager.RecordObserver.
func (m *Metrics) ObserveRecords(rule string, written, invalid int) {
	if written > 0 {
		m.written.WithLabelValues(rule).Add(float64(written))
	}
	if invalid > 0 {
		m.invalid.WithLabelValues(rule).Add(float64(invalid))
	}
}

// statusClass is "2xx" for 200..299 and so on; "none" without a response.
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "none"
	}
	return strconv.Itoa(status/100) + "xx"
}

// Track exports the worker's own totals as progress reports them (call it
// once, before Serve): items saved, failed, released, and leases lost.
func (m *Metrics) Track(progress func() manager.Summary) {
	for _, c := range []struct {
		name, help string
		get        func(manager.Summary) int64
	}{
		{"distscrape_items_saved_total", "Items this worker completed after a durable save.", func(s manager.Summary) int64 { return s.Saved }},
		{"distscrape_items_failed_total", "Items this worker reported failed (retried or not).", func(s manager.Summary) int64 { return s.Failed }},
		{"distscrape_leases_released_total", "Leases this worker handed back unstarted.", func(s manager.Summary) int64 { return s.Released }},
		{"distscrape_leases_lost_total", "Results this worker dropped because its lease had moved on.", func(s manager.Summary) int64 { return s.LeaseLost }},
	} {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.name, Help: c.help, ConstLabels: m.labels},
			func() float64 { return float64(c.get(progress())) }))
	}
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Serve serves /metrics and /healthz on ln until ctx ends. The caller
// listens, so that an address in use is an error at start, before any work
// (not after it).
func (m *Metrics) Serve(ctx context.Context, ln net.Listener, log *slog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("metrics listening", "addr", ln.Addr().String())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// crawlCollector reads the tracker's counters at scrape time: O(1).
type crawlCollector struct {
	stats StatsFunc
	crawl string
}

var (
	queueDesc   = prometheus.NewDesc("distscrape_items", "Items of the crawl by state (tracker counters; crawl-wide).", []string{"crawl", "state"}, nil)
	workersDesc = prometheus.NewDesc("distscrape_workers", "Workers seen within the last lease TTL (crawl-wide).", []string{"crawl"}, nil)
	pausedDesc  = prometheus.NewDesc("distscrape_paused", "1 while an operator has paused the crawl (crawl-wide).", []string{"crawl"}, nil)
)

func (q *crawlCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDesc
	ch <- workersDesc
	ch <- pausedDesc
}

func (q *crawlCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := q.stats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queueDesc, err)
		return
	}
	for state, v := range map[string]int64{"pending": st.Pending, "leased": st.Leased, "delayed": st.Delayed,
		"done": st.Done, "failed": st.Failed, "added": st.Added} {
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(v), q.crawl, state)
	}
	ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(st.Workers), q.crawl)
	paused := 0.0
	if st.Paused {
		paused = 1
	}
	ch <- prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, paused, q.crawl)
}
