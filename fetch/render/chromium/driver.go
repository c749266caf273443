package chromium

import (
	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/render"
)

func init() {
	render.RegisterBrowser(render.BrowserDriver{Name: "chromium", Find: Find,
		Start: func(client *fetch.Client, opt render.BrowserOptions) (render.Browser, error) {
			return New(client, Config{ExecPath: opt.ExecPath, Concurrency: opt.Concurrency, InScope: opt.InScope,
				Logger: opt.Logger})
		}})
}
