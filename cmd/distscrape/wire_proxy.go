package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/internal/app/dashboard"
	"github.com/distscrape/distscrape/tracker"
)

// sharedQuarantine is the SharedStore name under which workers record the
// proxies they quarantined, a field per proxy (its redacted URL), living
// as long as the quarantine: status reads them.
const sharedQuarantine = "proxies:quarantined"

// quarantineRecord is the value of one such field.
type quarantineRecord struct {
	Country   string    `json:"country,omitempty"`
	Until     time.Time `json:"until"`
	LastError string    `json:"last_error,omitempty"`
	By        string    `json:"by"` // host:pid of the worker that quarantined it
}

// proxyConfig converts fetch.proxies and fetch.proxy_rules (validated
// already) for fetch.Config.
func proxyConfig(f config.Fetch) ([]fetch.Proxy, []fetch.ProxyRule, error) {
	var proxies []fetch.Proxy
	for _, p := range f.Proxies {
		proxies = append(proxies, fetch.Proxy{URL: p.URL, Country: p.Country})
	}
	var rules []fetch.ProxyRule
	for i, r := range f.ProxyRules {
		re, err := regexp.Compile(r.Match)
		if err != nil {
			return nil, nil, fmt.Errorf("fetch.proxy_rules[%d].match: %w", i, err)
		}
		rules = append(rules, fetch.ProxyRule{Match: re, Country: r.Country})
	}
	return proxies, rules, nil
}

// proxyReporter is a worker's fetch.Config.OnProxyState: each proxy
// entering or leaving quarantine is logged, and recorded in the tracker's
// SharedStore (when it has one) for status, the fleet's view.
func proxyReporter(tr tracker.Engine, log *slog.Logger) func(fetch.ProxyState) {
	store, _ := tr.(tracker.SharedStore)
	host, _ := os.Hostname()
	by := host + ":" + strconv.Itoa(os.Getpid())
	return func(s fetch.ProxyState) {
		if s.Quarantined.IsZero() {
			log.Info("proxy back in use", "proxy", s.URL, "country", s.Country)
		} else {
			log.Warn("proxy quarantined", "proxy", s.URL, "country", s.Country, "until", s.Quarantined.Format(time.RFC3339), "err", s.LastError)
		}
		if store == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ttl := time.Until(s.Quarantined)
		if ttl < time.Millisecond {
			ttl = time.Millisecond // back in use: the field goes at once
		}
		v, _ := json.Marshal(quarantineRecord{Country: s.Country, Until: s.Quarantined, LastError: s.LastError, By: by})
		if err := store.PutField(ctx, sharedQuarantine, s.URL, v, ttl); err != nil {
			log.Warn("proxy quarantine not recorded for status", "proxy", s.URL, "err", redactor.Error(err))
		}
	}
}

// checkProxies checks every proxy at a worker's start (fetch.CheckProxies
// against cfg.ProxyCheckTarget): the dead are quarantined, and none alive
// is an error.
func checkProxies(ctx context.Context, cfg *config.Config, fe *fetch.Client, log *slog.Logger) error {
	if len(cfg.Fetch.Proxies) == 0 {
		return nil
	}
	target := cfg.ProxyCheckTarget()
	states, err := fe.CheckProxies(ctx, target, cfg.Fetch.ProxyCheckTimeout)
	if errors.Is(err, fetch.ErrCheckTargetDown) {
		// The site is down at start: its pages fail and are retried like
		// any fetch; the proxies that answered are kept.
		log.Warn("proxies checked: the site may be down, its pages will be retried", "err", err)
		err = nil
	}
	if err != nil {
		return fmt.Errorf("fetch.proxies: %w", err)
	}
	live := 0
	for _, s := range states {
		if s.Quarantined.IsZero() {
			live++
		}
	}
	log.Info("proxies checked", "live", live, "quarantined", len(states)-live, "target", target)
	return nil
}

// quarantinedProxies reads the proxies the fleet holds in quarantine,
// sorted by URL (redacted as recorded); none when the tracker shares no
// values.
func quarantinedProxies(ctx context.Context, tr any) ([]dashboard.QuarantinedProxy, error) {
	store, ok := tr.(tracker.SharedStore)
	if !ok {
		return nil, nil
	}
	fields, err := store.Fields(ctx, sharedQuarantine)
	if err != nil {
		return nil, fmt.Errorf("quarantined proxies: %w", err)
	}
	var out []dashboard.QuarantinedProxy
	for _, u := range slices.Sorted(maps.Keys(fields)) {
		var r quarantineRecord
		if json.Unmarshal(fields[u], &r) != nil || r.Until.IsZero() {
			continue
		}
		out = append(out, dashboard.QuarantinedProxy{URL: u, Country: r.Country, Until: r.Until, LastError: r.LastError, By: r.By})
	}
	return out, nil
}

// printQuarantine lists the proxies the fleet holds in quarantine, for
// status; nothing when none is or the tracker shares no values.
func printQuarantine(ctx context.Context, w io.Writer, tr tracker.Engine) error {
	list, err := quarantinedProxies(ctx, tr)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	for _, p := range list {
		country := ""
		if p.Country != "" {
			country = " (" + p.Country + ")"
		}
		fmt.Fprintf(w, "proxy quarantined: %s%s until %s by %s: %s\n", p.URL, country, p.Until.Format(time.RFC3339), p.By, p.LastError)
	}
	return nil
}

// dashboardProxies is the dashboard's source of quarantined proxies: nil
// for a crawl without proxies or a tracker that shares no values.
func dashboardProxies(cfg *config.Config, tr any) dashboard.ProxyQuarantine {
	if _, ok := tr.(tracker.SharedStore); !ok || len(cfg.Fetch.Proxies) == 0 {
		return nil
	}
	return func(ctx context.Context) ([]dashboard.QuarantinedProxy, error) { return quarantinedProxies(ctx, tr) }
}
