package saver

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"

	"github.com/distscrape/distscrape/driver"
)

// Driver is a saver driver as it registers itself (Register): its kind
// (saver.kind in the config) and its config section.
type Driver struct {
	Kind string
	// New returns an empty section of the driver's own keys: a pointer to
	// a struct the config decodes saver's keys into (package driver says
	// how).
	New func() Section
	// Keeps, when set, says what the saver keeps of a revisited page
	// instead of saver.keep_versions ("every version (an archive is
	// append only)"); empty, the saver takes keep_versions.
	Keeps string
	// WireBody asks the fetcher for a body as transmitted (Page.WireBody).
	WireBody bool
	// Source, when set, reads a store of this kind back (`extract
	// --from`): from is its path or URL; sec is the crawl's section when
	// saver.kind is this kind (its key template, its endpoint), else nil.
	Source func(from string, sec Section, crawl string) (Source, error)
}

// Section is a saver driver's config section, decoded and defaulted.
type Section interface {
	// Validate adds what is wrong with the section's keys to p.
	Validate(p *driver.Problems, env Env)
	// Open opens the saver for env.Worker.
	Open(ctx context.Context, env Env) (Saver, error)
	// Location says where env.Worker's pages go, for people ("tar archive
	// out/c-w1.tar.gz").
	Location(env Env) string
}

// Checker is a Section that `distscrape check` can check without writing
// to the store (a directory looked at); a Section without it is opened
// and closed, which must write nothing.
type Checker interface {
	Check(ctx context.Context, env Env) error
}

// LocalDir is a Section whose pages go to a folder of this machine: the
// crawl keeps its own files (the dead letters of a crawl whose tracker
// dies with it) in that folder's MetaDir.
type LocalDir interface {
	LocalDir(env Env) string
}

// Env is what a saver is opened (and its section checked) with besides
// its own keys: the crawl's.
type Env struct {
	Crawl  string
	Worker string // "check" for `distscrape check`
	Logger *slog.Logger
	// KeepVersions is saver.keep_versions (0 for a driver with Keeps).
	KeepVersions int
	// LinkCrawl: the crawl's items are URLs (scraper.kind link).
	LinkCrawl bool
	// ResolveLink is the link crawl's scope, for an offline mirror: nil in
	// an ID crawl and at validation.
	ResolveLink func(base *url.URL, ref string, requisite bool) (key string, follow bool)
	// Revisits: the crawl revisits pages (scraper.revisit), so unchanged
	// responses come back (a 304) and a saver may refer to the earlier one.
	Revisits bool
	// Software and ConfigDigest describe the crawler to archives (WARC's
	// warcinfo).
	Software     string
	ConfigDigest string
}

// Expand fills the placeholders of a name template known before any page
// is fetched ({crawl}, {worker}), for display.
func (e Env) Expand(tmpl string) string {
	return strings.NewReplacer("{crawl}", e.Crawl, "{worker}", e.Worker).Replace(tmpl)
}

var drivers driver.Registry[Driver]

// Register adds a saver driver; call it from the driver package's init.
func Register(d Driver) { drivers.Register(d.Kind, d) }

// Lookup returns the driver registered as kind.
func Lookup(kind string) (Driver, bool) { return drivers.Lookup(kind) }

// Kinds lists the registered kinds, sorted.
func Kinds() []string { return drivers.Kinds() }

// RegistryErr reports a kind registered twice.
func RegistryErr() error { return drivers.Err() }

// CheckTemplate checks a name template of a section's key with
// ValidateTemplate and, when unique, that it differs per item, so two
// pages never share one name.
func CheckTemplate(p *driver.Problems, key, tmpl string, unique bool) {
	if err := ValidateTemplate(key, tmpl); err != nil {
		var te *TemplateError
		if errors.As(err, &te) {
			p.Add(key, "%s", te.Problem)
		} else {
			p.Add(key, "%v", err)
		}
		return
	}
	if unique && !strings.Contains(tmpl, "{id}") && !strings.Contains(tmpl, "{sha256}") && !strings.Contains(tmpl, "{path}") {
		p.Add(key, "must contain {id}, {sha256} or {path}, or every page gets the same name")
	}
}

func init() {
	Register(Driver{Kind: "none", New: func() Section { return &noneSection{} }, Keeps: "nothing"})
}

// noneSection is saver.kind none: no keys.
type noneSection struct{}

func (*noneSection) Validate(*driver.Problems, Env) {}

func (*noneSection) Open(context.Context, Env) (Saver, error) { return None(), nil }

func (*noneSection) Location(Env) string { return "none (discovery only)" }
