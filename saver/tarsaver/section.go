package tarsaver

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/saver"
)

func init() {
	saver.Register(saver.Driver{Kind: "tar", New: func() saver.Section { return &Section{} },
		Source: source,
		Keeps:  "every version (an archive is append only)"})
}

// Section is saver.kind tar's keys (docs/config.md, "saver").
type Section struct {
	Path string `yaml:"path" default:"out/{crawl}-{worker}.tar.gz"`
}

// Validate implements saver.Section.
func (s *Section) Validate(p *driver.Problems, _ saver.Env) {
	switch {
	case s.Path == "":
		p.Add("path", "required when saver.kind is tar")
	case !hasTarExt(s.Path):
		p.Add("path", "must end in .tar, .tar.gz, .tar.bz2 or .tar.zst")
	default:
		saver.CheckTemplate(p, "path", s.Path, false)
	}
}

func hasTarExt(path string) bool {
	for _, ext := range []string{".tar", ".tar.gz", ".tar.bz2", ".tar.zst"} {
		if strings.HasSuffix(path, ext) && len(path) > len(ext) {
			return true
		}
	}
	return false
}

// Open implements saver.Section.
func (s *Section) Open(_ context.Context, env saver.Env) (saver.Saver, error) {
	return New(Config{Path: s.Path, Crawl: env.Crawl, Worker: env.Worker})
}

// Check implements saver.Checker.
func (s *Section) Check(_ context.Context, env saver.Env) error {
	return Check(Config{Path: s.Path, Crawl: env.Crawl, Worker: env.Worker})
}

// LocalDir implements saver.LocalDir: the archive's folder.
func (s *Section) LocalDir(env saver.Env) string {
	return filepath.Dir(env.Expand(s.Path))
}

// Location implements saver.Section.
func (s *Section) Location(env saver.Env) string { return "tar archive " + env.Expand(s.Path) }

// source reads the store at from (a directory, an archive).
func source(from string, _ saver.Section, _ string) (saver.Source, error) {
	return saver.SourceFunc(func(ctx context.Context, fn saver.WalkFunc) (saver.Walked, error) {
		return Walk(ctx, from, fn)
	}), nil
}
