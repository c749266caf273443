package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/internal/app/notify"
	"github.com/distscrape/distscrape/tracker"
)

// reports are a worker's reports to the operator (notify: in the config):
// a Notifier, and a watcher of the tracker that raises what only the
// tracker shows. nil when the config names no receiver; its methods are
// then no-ops.
type reports struct {
	n       *notify.Notifier
	crawl   string
	worker  string
	timeout time.Duration
	stop    context.CancelFunc
	watched chan struct{}
}

// startReports builds the receivers of cfg.Notify and starts watching tr.
// A fleet sends each report once through the tracker's SharedStore
// (Claim); an engine without it makes each worker send its own, said once
// in the log.
func startReports(ctx context.Context, cfg *config.Config, worker string, tr tracker.Engine, log *slog.Logger) (*reports, error) {
	nc := cfg.Notify
	if !nc.Enabled() {
		return nil, nil
	}
	senders, err := notifySenders(nc)
	if err != nil {
		return nil, usageError{redactor.Error(err)}
	}
	var claimer notify.Claimer
	if s, ok := tr.(tracker.SharedStore); ok {
		claimer = s
	} else {
		log.Warn("notify: the tracker cannot claim a report for the fleet (no tracker.SharedStore): each worker sends its own")
	}
	on := make([]notify.Kind, len(nc.On))
	for i, k := range nc.On {
		on[i] = notify.Kind(k)
	}
	n := notify.New(notify.Config{Senders: senders, Claimer: claimer, On: on, Queue: nc.Queue, Timeout: nc.Timeout,
		Attempts: nc.Attempts, Logger: log, Redact: redactor.String})
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	r := &reports{n: n, crawl: cfg.Crawl, worker: worker, timeout: nc.Timeout, stop: stop, watched: make(chan struct{})}
	go func() {
		defer close(r.watched)
		notify.Watch(wctx, notify.WatchConfig{Source: tr, Notifier: n, Crawl: cfg.Crawl, Worker: worker,
			DeadLetterThreshold: nc.DeadLetterRate.Threshold, DeadLetterWindow: nc.DeadLetterRate.Window,
			SummaryEvery: nc.SummaryEvery, TrackerDownAfter: nc.TrackerDown})
	}()
	return r, nil
}

func notifySenders(nc config.Notify) ([]notify.Sender, error) {
	var out []notify.Sender
	for i, w := range nc.Webhooks {
		s, err := notify.NewWebhook(notify.WebhookConfig{URL: w.URL, Format: w.Format, Headers: w.Headers})
		if err != nil {
			return nil, fmt.Errorf("notify.webhooks[%d]: %w", i, err)
		}
		out = append(out, s)
	}
	if e := nc.Email; e.SMTP != "" {
		var roots *x509.CertPool
		if e.CAFile != "" {
			pem, err := os.ReadFile(e.CAFile)
			if err != nil {
				return nil, fmt.Errorf("notify.email.ca_file: %w", err)
			}
			roots = x509.NewCertPool()
			if !roots.AppendCertsFromPEM(pem) {
				return nil, errors.New("notify.email.ca_file: no PEM certificate")
			}
		}
		s, err := notify.NewSMTP(notify.SMTPConfig{Addr: e.SMTP, From: e.From, To: e.To, Username: e.Username,
			Password: e.Password, StartTLS: e.StartTLS == nil || *e.StartTLS, AllowInsecureAuth: e.AllowInsecureAuth, RootCAs: roots})
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// finish stops the watcher, reports how the run ended (done, or the limit
// that stopped it; nothing for a signal or an error) and waits for the
// reports queued, at most one notify.timeout: a receiver that is down
// delays the exit by that, never the crawl.
func (r *reports) finish(ctx context.Context, runErr error, limit *tracker.LimitError, st tracker.Stats, stErr error) {
	if r == nil {
		return
	}
	r.stop()
	<-r.watched
	now := time.Now()
	switch {
	case stErr != nil || ctx.Err() != nil:
	case limit != nil:
		r.n.Notify(notify.LimitEvent(r.crawl, r.worker, limit.What(), st, now))
	case runErr == nil && st.Pending+st.Leased+st.Delayed == 0:
		r.n.Notify(notify.DoneEvent(r.crawl, r.worker, st, now))
	}
	wait, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	r.n.Close(wait)
}
