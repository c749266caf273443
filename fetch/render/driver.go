package render

import (
	"log/slog"
	"net/url"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/fetch"
)

// Browser is a Renderer a worker starts once and closes when it ends.
type Browser interface {
	Renderer
	Close() error
}

// BrowserDriver is a browser as it registers itself (RegisterBrowser).
type BrowserDriver struct {
	Name string
	// Find says where the browser's binary is (path, or the driver's
	// default for ""), without starting it: `distscrape check`.
	Find func(path string) (string, error)
	// Start starts the browser on the crawl's client (its cookies, its
	// politeness, its proxies).
	Start func(client *fetch.Client, opt BrowserOptions) (Browser, error)
}

// BrowserOptions are the crawl's settings of a browser (fetch.render_*).
type BrowserOptions struct {
	ExecPath    string // the binary; "" the driver's default
	Concurrency int    // pages at once; 0 the driver's default
	// InScope decides what a page's scripts and frames may load.
	InScope func(*url.URL) bool
	Logger  *slog.Logger
}

var browsers driver.Registry[BrowserDriver]

// RegisterBrowser adds a browser; call it from the driver package's init.
func RegisterBrowser(d BrowserDriver) { browsers.Register(d.Name, d) }

// LinkedBrowser returns the browser linked into the program: the one
// registered, false when none or several are (a program links one).
func LinkedBrowser() (BrowserDriver, bool) {
	names := browsers.Kinds()
	if len(names) != 1 || browsers.Err() != nil {
		return BrowserDriver{}, false
	}
	return browsers.Lookup(names[0])
}
