// Package metrics exposes a worker's Prometheus metrics: fetches by
// outcome, bytes, latency, and the crawl's queue sizes. Queue sizes come
// from the tracker's O(1) counters, so a scrape never scans a queue.
package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/distscrape/distscrape/tracker"
)

// StatsFunc reads the tracker's counters.
type StatsFunc func(context.Context) (tracker.Stats, error)

// Metrics is one worker's registry. It implements manager.Observer.
type Metrics struct {
	reg     *prometheus.Registry
	fetches *prometheus.CounterVec
	bytes   prometheus.Counter
	latency prometheus.Histogram
}

// New registers the metrics of one worker of crawl.
func New(crawl, worker string, stats StatsFunc) *Metrics {
	labels := prometheus.Labels{"crawl": crawl, "worker": worker}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "distscrape_pages_total", Help: "Items processed by this worker, by outcome (ok, retry, final).", ConstLabels: labels,
		}, []string{"outcome"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "distscrape_fetched_bytes_total", Help: "Body bytes fetched by this worker.", ConstLabels: labels,
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "distscrape_fetch_seconds", Help: "Fetch latency.", ConstLabels: labels,
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}),
	}
	m.reg.MustRegister(m.fetches, m.bytes, m.latency, &queueCollector{stats: stats, crawl: crawl},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveFetch records one processed item.
func (m *Metrics) ObserveFetch(outcome string, n int, d time.Duration) {
	m.fetches.WithLabelValues(outcome).Inc()
	m.bytes.Add(float64(n))
	if d > 0 {
		m.latency.Observe(d.Seconds())
	}
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Serve serves /metrics on ln until ctx ends. The caller listens, so that
// an address in use is an error at start, before any work (not after it).
func (m *Metrics) Serve(ctx context.Context, ln net.Listener, log *slog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
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

// queueCollector reads the tracker's counters at scrape time.
type queueCollector struct {
	stats StatsFunc
	crawl string
}

var queueDesc = prometheus.NewDesc("distscrape_items", "Items of the crawl by state (tracker counters).", []string{"crawl", "state"}, nil)
var workersDesc = prometheus.NewDesc("distscrape_workers", "Workers seen within the last lease TTL.", []string{"crawl"}, nil)

func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDesc
	ch <- workersDesc
}

func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
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
}
