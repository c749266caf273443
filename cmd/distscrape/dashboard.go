package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/internal/app/dashboard"
	"github.com/distscrape/distscrape/tracker"
)

var (
	listenFlag = &cli.StringFlag{Name: "listen", Value: "127.0.0.1:8080",
		Usage: "serve the dashboard on `HOST:PORT`; beyond loopback it needs a token"}
	// The environment's DISTSCRAPE_DASHBOARD_TOKEN is dashboard.token's
	// override, like every config key's.
	tokenFlag = &cli.StringFlag{Name: "token",
		Usage: "require `TOKEN` of every request (overrides dashboard.token); open the page once as /?token=TOKEN"}
	readOnlyFlag = &cli.BoolFlag{Name: "read-only", Usage: "show the crawl, hide and refuse every action"}
)

func dashboardCommand() *cli.Command {
	return &cli.Command{
		Name:  "dashboard",
		Usage: "serve a live web dashboard of the crawl: counts, workers, hosts, dead letters; requeue, pause, resume",
		Description: `Examples:
   distscrape dashboard -c fleet.yaml                      # http://127.0.0.1:8080/
   distscrape dashboard -c fleet.yaml --read-only
   DASHBOARD_TOKEN=$(openssl rand -hex 16) distscrape dashboard -c fleet.yaml --listen 0.0.0.0:8080 --token "$DASHBOARD_TOKEN"
Every view reads the tracker's O(1) counters or one page; the crawl-wide
Prometheus gauges are served at /metrics too.`,
		Flags: []cli.Flag{configFlag, listenFlag, tokenFlag, readOnlyFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("dashboard: unexpected arguments %q", c.Args().Slice())
			}
			cfg, err := loadConfig(c)
			if err != nil {
				return err
			}
			ln, err := dashboardListen(c, cfg)
			if err != nil {
				return err
			}
			defer ln.Close()
			if err := requireShared(cfg, "dashboard"); err != nil {
				return err
			}
			open := openTracker
			if c.Bool("read-only") {
				open = openReadOnly
			}
			tr, err := open(c.Context, cfg)
			if err != nil {
				return within("tracker", err)
			}
			defer tr.Close()
			return serveDashboard(c.Context, ln, cfg, tr, c.Bool("read-only"), true)
		},
	}
}

// dashboardListen takes --token (else dashboard.token), refuses a
// non-loopback address without one (exit 2), and binds the address before
// any work, so that a port in use is an error at start.
func dashboardListen(c *cli.Context, cfg *config.Config) (net.Listener, error) {
	if c.IsSet("token") {
		cfg.Dashboard.Token = c.String("token")
		if err := config.ValidateToken(cfg.Dashboard.Token); err != nil {
			return nil, usagef("--token: %w", err)
		}
		redactor = cfg.Redactor() // the token is a secret from now on
	}
	addr := c.String("listen")
	if c.Command.Name == "crawl" {
		addr = c.String("dashboard")
	}
	if err := dashboard.CheckListen(addr, cfg.Dashboard.Token); err != nil {
		return nil, usagef("dashboard: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("dashboard: %w", err)
	}
	return ln, nil
}

// serveDashboard serves the dashboard of tr on ln until ctx ends; with
// crawlWide it also serves the crawl-wide gauges at /metrics (one place
// for them in a fleet).
func serveDashboard(ctx context.Context, ln net.Listener, cfg *config.Config, tr tracker.Inspector, readOnly, crawlWide bool) error {
	var mh http.Handler
	if crawlWide {
		mh = newMetrics(cfg.Crawl, "dashboard", tr, true).Handler()
	}
	records, closeRecords := dashboardRecords(cfg)
	defer closeRecords()
	srv, err := dashboard.New(dashboard.Config{Inspector: tr, Crawl: cfg.Crawl, Token: cfg.Dashboard.Token,
		Records: records, Proxies: dashboardProxies(cfg, tr), ReadOnly: readOnly, Redact: redactor.String, Metrics: mh, Logger: slog.Default().With("crawl", cfg.Crawl),
		Normalize: func(raw string) (string, error) { // as distscrape lookup reads a key
			it, err := cfg.Scraper.SeedItem(raw)
			return it.Key, err
		}})
	if err != nil {
		return err
	}
	u := "http://" + ln.Addr().String() + "/"
	// Stdout, so a script (or a test) learns the port of --listen :0; the
	// token is never printed.
	fmt.Fprintf(os.Stdout, "dashboard: %s\n", u)
	slog.Info("dashboard listening", "url", u, "read_only", readOnly, "token", cfg.Dashboard.Token != "")
	if err := srv.Serve(ctx, ln); err != nil && !errors.Is(err, context.Canceled) {
		return within("dashboard", err)
	}
	return nil
}
