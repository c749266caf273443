package filesaver

import (
	"context"
	"fmt"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/saver"
)

func init() {
	saver.Register(saver.Driver{Kind: "file", New: func() saver.Section { return &Section{} },
		Source: source})
}

// Section is saver.kind file's keys (docs/config.md, "saver").
type Section struct {
	Dir          string `yaml:"dir" default:"out"`
	Layout       string `yaml:"layout" default:"mirror"` // mirror | flat
	Name         string `yaml:"name"`                    // flat: the name template; default {id}
	ConvertLinks bool   `yaml:"convert_links"`           // mirror, link crawls: an offline mirror
}

// Defaults implements driver.Defaulter: a flat layout names pages {id}.
func (s *Section) Defaults() {
	if s.Layout == "flat" && s.Name == "" {
		s.Name = "{id}"
	}
}

// Validate implements saver.Section.
func (s *Section) Validate(p *driver.Problems, env saver.Env) {
	if s.Dir == "" {
		p.Add("dir", "required when saver.kind is file")
	}
	if p.OneOf("layout", s.Layout, "mirror", "flat") && s.Layout == "flat" {
		saver.CheckTemplate(p, "name", s.Name, true)
		if s.ConvertLinks {
			p.Add("convert_links", "needs saver.layout mirror: a flat name says nothing of where a link's target is")
		}
	}
	if s.ConvertLinks && !env.LinkCrawl {
		p.Add("convert_links", "needs scraper.kind link: the links of an ID crawl are not its items")
	}
}

func (s *Section) config(env saver.Env) Config {
	c := Config{Dir: s.Dir, Layout: s.Layout, Name: s.Name, Crawl: env.Crawl, Worker: env.Worker, Logger: env.Logger,
		KeepVersions: env.KeepVersions}
	if s.ConvertLinks && env.ResolveLink != nil {
		c.ConvertLinks = env.ResolveLink
	}
	return c
}

// Open implements saver.Section.
func (s *Section) Open(_ context.Context, env saver.Env) (saver.Saver, error) {
	return New(s.config(env))
}

// Check implements saver.Checker: the directory is looked at, not written.
func (s *Section) Check(_ context.Context, env saver.Env) error { return Check(s.config(env)) }

// Location implements saver.Section.
func (s *Section) Location(saver.Env) string {
	return fmt.Sprintf("directory %s (%s layout)", s.Dir, s.Layout)
}

// LocalDir implements saver.LocalDir.
func (s *Section) LocalDir(saver.Env) string { return s.Dir }

// source reads the store at from (a directory, an archive).
func source(from string, _ saver.Section, _ string) (saver.Source, error) {
	return saver.SourceFunc(func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error) {
		return Walk(ctx, from, fn)
	}), nil
}
