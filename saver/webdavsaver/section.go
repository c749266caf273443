package webdavsaver

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/saver"
)

func init() {
	saver.Register(saver.Driver{Kind: "webdav", New: func() saver.Section { return &Section{} },
		Keeps:  "the newest version only (a PUT replaces the file)",
		Source: source})
}

// Section is saver.kind webdav's keys (docs/config.md, "WebDAV").
type Section struct {
	URL         string        `yaml:"url" redact:"url"` // the collection; user:password for Basic auth
	Name        string        `yaml:"name" default:"{crawl}/{host}/{sha256}"`
	Timeout     time.Duration `yaml:"timeout" default:"30s"`   // each request's
	Concurrency int           `yaml:"concurrency" default:"8"` // pages uploading at once
}

// Validate implements saver.Section. No message repeats the URL, which
// may hold a password.
func (s *Section) Validate(p *driver.Problems, _ saver.Env) {
	if s.URL == "" {
		p.Add("url", "required when saver.kind is webdav (https://cloud.example/remote.php/dav/files/USER/crawls/)")
	} else if u := p.CredentialURL("url", s.URL, "http", "https"); u != nil && (u.RawQuery != "" || u.ForceQuery || u.Fragment != "") {
		p.Add("url", "a collection's URL takes no query or fragment")
	}
	saver.CheckTemplate(p, "name", s.Name, true)
	p.DurRange("timeout", s.Timeout, time.Second, time.Hour)
	p.IntRange("concurrency", s.Concurrency, 1, 256)
}

// Location implements saver.Section: the URL without its user
// information, and the name template.
func (s *Section) Location(env saver.Env) string {
	return "WebDAV " + publicURL(s.URL) + env.Expand(s.Name)
}

// publicURL is raw without user information, ending in "/".
func publicURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(invalid URL) "
	}
	u.User = nil
	s := u.String()
	if len(s) == 0 || s[len(s)-1] != '/' {
		s += "/"
	}
	return s
}

// Open implements saver.Section; it only reads when it starts (PROPFIND).
func (s *Section) Open(ctx context.Context, env saver.Env) (saver.Saver, error) {
	return New(ctx, Config{URL: s.URL, Name: s.Name, Timeout: s.Timeout, Concurrency: s.Concurrency,
		Crawl: env.Crawl, Worker: env.Worker, Logger: env.Logger})
}

// source reads the pages under the collection at from, by the crawl's
// name template when its saver is webdav. A from without user
// information takes the crawl's saver.url's when both name one server.
func source(from string, sec saver.Section, crawl string) (saver.Source, error) {
	u, err := url.Parse(from)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--from: want the http:// or https:// URL of a WebDAV collection")
	}
	cfg := Config{URL: from, Crawl: crawl}
	if s, ok := sec.(*Section); ok {
		cfg.Name, cfg.Timeout = s.Name, s.Timeout
		if own, err := url.Parse(s.URL); err == nil && u.User == nil && own.User != nil &&
			own.Scheme == u.Scheme && own.Host == u.Host {
			u.User = own.User
			cfg.URL = u.String()
		}
	}
	return saver.SourceFunc(func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error) {
		return Walk(ctx, cfg, fn)
	}), nil
}
