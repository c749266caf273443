package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/cookies"
	"github.com/distscrape/distscrape/fetch/login"
	"github.com/distscrape/distscrape/fetch/render"
	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/scraper"
	"github.com/distscrape/distscrape/tracker"
)

// This file wires what a page may need besides a plain fetch: the crawl's
// cookie jar, headless Chromium for fetch.render, and the login.

// openJar is the crawl's cookie jar, nil with fetch.cookies: false. On a
// tracker with a SharedStore it is the fleet's; fetch.cookies_file is
// imported into it.
func openJar(cfg *config.Config, tr tracker.Engine, log *slog.Logger) (*cookies.Jar, error) {
	if !cfg.Fetch.CookiesOn() {
		return nil, nil
	}
	jc := cookies.Config{Name: "cookies", Logger: log}
	if s, ok := tr.(tracker.SharedStore); ok {
		jc.Store = s
	}
	jar, err := cookies.New(jc)
	if err != nil {
		return nil, err
	}
	if f := cfg.Fetch.CookiesFile; f != "" {
		entries, err := cookies.ReadFile(f)
		if err != nil {
			return nil, usagef("fetch.cookies_file: %w", err)
		}
		jar.Import(entries)
		log.Info("cookies imported", "file", f, "cookies", len(entries))
	}
	return jar, nil
}

// linkedBrowser is the browser this program links (drivers.go).
func linkedBrowser() (render.BrowserDriver, error) {
	d, ok := render.LinkedBrowser()
	if !ok {
		return d, errors.New("this program links no browser (or more than one)")
	}
	return d, nil
}

// needsBrowser reports whether the crawl renders pages or logs in by browser.
func needsBrowser(cfg *config.Config) bool {
	return len(cfg.Fetch.Render) > 0 || len(cfg.Login.Steps) > 0
}

// checkRendering is `distscrape check` for rendering and cookies: the
// browser is found (not started) and the cookies file read. It says what
// it checked; nothing when the config needs neither.
func checkRendering(cfg *config.Config) (string, error) {
	var out string
	if needsBrowser(cfg) {
		b, err := linkedBrowser()
		if err != nil {
			return "", within("fetch.render", err)
		}
		path, err := b.Find(cfg.Fetch.RenderBrowser)
		if err != nil {
			return "", within("fetch.render_browser", err)
		}
		out = "browser ok: " + path
	}
	if f := cfg.Fetch.CookiesFile; f != "" {
		entries, err := cookies.ReadFile(f)
		if err != nil {
			return "", usagef("fetch.cookies_file: %w", err)
		}
		if out != "" {
			out += "\n"
		}
		out += fmt.Sprintf("cookies ok: %d cookies in %s", len(entries), f)
	}
	return out, nil
}

// pageFetcher is what the manager fetches through, and what to close.
type pageFetcher struct {
	manager.Fetcher
	browser render.Browser // nil without rendering
	session *login.Session // nil without login:
}

func (p *pageFetcher) Close() {
	if p.browser != nil {
		_ = p.browser.Close()
	}
}

// openPages builds the fetcher of a worker's pages on the client fe: a
// render.Router when fetch.render has rules (the browser started now, so
// a missing Chromium is an error at once), a login.Session around it when
// login: is set. onFatal is called once if a login fails.
func openPages(cfg *config.Config, fe *fetch.Client, inScope func(*url.URL) bool, log *slog.Logger, onFatal func(error)) (*pageFetcher, error) {
	p := &pageFetcher{Fetcher: fe}
	if needsBrowser(cfg) {
		d, err := linkedBrowser()
		if err != nil {
			return nil, within("fetch.render", err)
		}
		b, err := d.Start(fe, render.BrowserOptions{ExecPath: cfg.Fetch.RenderBrowser, Concurrency: cfg.Fetch.RenderConcurrency,
			InScope: inScope, Logger: log})
		if err != nil {
			return nil, within("fetch.render", err)
		}
		p.browser = b
	}
	if len(cfg.Fetch.Render) > 0 {
		pick, err := renderPicker(cfg)
		if err != nil {
			p.Close()
			return nil, within("fetch.render", err)
		}
		p.Fetcher = &render.Router{Plain: fe, Renderer: p.browser, Pick: pick}
	}
	if l := cfg.Login; l.Set() {
		for _, w := range loginOffScope(cfg, inScope) {
			log.Warn(w)
		}
		lc := login.Config{URL: l.URL, Fields: l.Fields, FormURL: l.FormURL, TokenField: l.TokenField,
			PageURL: l.Page, Steps: l.RenderSteps(),
			LoggedOut: login.LoggedOut{Status: l.LoggedOut.Status, RedirectTo: l.LoggedOut.RedirectTo, Selector: l.LoggedOut.Selector},
			OnFatal:   onFatal, Logger: log}
		if p.browser != nil {
			lc.Renderer = p.browser
		}
		s, err := login.New(p.Fetcher, fe, lc)
		if err != nil {
			p.Close()
			return nil, within("login", err)
		}
		p.Fetcher, p.session = s, s
	}
	return p, nil
}

// renderPicker picks the first fetch.render rule whose match matches the
// URL fetched.
func renderPicker(cfg *config.Config) (func(*http.Request) (render.Rule, bool), error) {
	type compiled struct {
		match func(string) (bool, error)
		rule  render.Rule
	}
	kinds := cfg.RenderKinds()
	var rules []compiled
	for i, r := range cfg.Fetch.Render {
		re, err := scraper.CompileRegex(fmt.Sprintf("fetch.render[%d].match", i), r.Match, cfg.Scraper.RegexTimeout)
		if err != nil {
			return nil, err
		}
		rules = append(rules, compiled{match: re.MatchString,
			rule: render.Rule{WaitFor: r.WaitFor, Timeout: r.Timeout, Scroll: r.Scroll, Capture: kinds}})
	}
	return func(req *http.Request) (render.Rule, bool) {
		u := req.URL.String()
		for _, c := range rules {
			if ok, err := c.match(u); ok && err == nil {
				return c.rule, true
			}
		}
		return render.Rule{}, false
	}, nil
}

// loginFirst logs in before the first checkout, when login: is set. A
// site that cannot be reached is no error here: the session logs it and
// each page tries the login again, failing retryably while it is down.
func (p *pageFetcher) loginFirst(ctx context.Context) error {
	if p.session == nil {
		return nil
	}
	err := p.session.Login(ctx)
	if errors.Is(err, login.ErrUnreachable) {
		return nil
	}
	return within("login", err)
}

// loginOffScope returns a warning for each login URL outside the crawl:
// neither in its scope nor on the host (and port) of a seed or of
// download_url_fmt. The login's fields, a password among them, are sent
// there. It is a warning, not an error: a site may log in on a host of
// its own (auth.example.com). The URLs are shown redacted; no field
// value is.
func loginOffScope(cfg *config.Config, inScope func(*url.URL) bool) []string {
	hosts := map[string]bool{}
	for _, raw := range append([]string{cfg.Scraper.DownloadURLFmt}, cfg.Scraper.Seeds...) {
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			hosts[strings.ToLower(u.Host)] = true
		}
	}
	l := cfg.Login
	var out []string
	for _, u := range []struct{ key, raw string }{{"login.url", l.URL}, {"login.form_url", l.FormURL}, {"login.page", l.Page}} {
		if u.raw == "" {
			continue
		}
		pu, err := url.Parse(u.raw)
		if err != nil || inScope(pu) || hosts[strings.ToLower(pu.Host)] {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s is outside the crawl's scope and hosts: the login's fields (a password) are sent there; add its host to scraper.scope if that is meant",
			u.key, cfg.Redactor().URL(u.raw)))
	}
	return out
}
