package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/extract"
	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// waczCommand packages a WARC directory as a WACZ file. A fleet runs it
// once, after every worker has ended: a worker cannot know it is the last
// one, and a file still being written is refused.
func waczCommand() *cli.Command {
	return &cli.Command{
		Name:      "wacz",
		Usage:     "package the WARC files of a directory as a WACZ file (ReplayWeb.page, pywb)",
		ArgsUsage: "[DIR]",
		Description: `Writes DIR.wacz (or -o FILE): the .warc.gz files stored under archive/, a
merged CDXJ index, pages/pages.jsonl (with each page's main text when -c has
a text: main rule) and datapackage.json with the sha256 of every file.
Files that dead workers left with a damaged tail are repaired
first; a file a live worker is still writing is refused: run it once the
crawl has ended (every worker of a fleet). DIR defaults to saver.dir of -c.
Examples:
   distscrape wacz out/warc
   distscrape wacz -c fleet.yaml -o /srv/archives/site.wacz`,
		Flags: []cli.Flag{configFlag,
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the WACZ `FILE` (default DIR.wacz)"},
			&cli.StringFlag{Name: "title", Usage: "the package's title (default the crawl's name, or DIR's)"},
		},
		Action: func(c *cli.Context) error {
			dir, title := c.Args().First(), c.String("title")
			if c.NArg() > 1 {
				return usagef("wacz: one directory, got %d arguments", c.NArg())
			}
			var text pageText
			if c.String("config") != "" {
				cfg, err := loadConfig(c)
				if err != nil {
					return err
				}
				w, ok := cfg.Saver.Driver.(*warcsaver.Section)
				if !ok {
					return usagef("wacz: saver.kind is %s, not warc", cfg.Saver.Kind)
				}
				if dir == "" {
					dir = w.Dir
				}
				if title == "" {
					title = cfg.Crawl
				}
				if text, err = mainTextOf(cfg); err != nil {
					return within("extract", err)
				}
			}
			if dir == "" {
				return usagef("wacz: no directory: pass DIR or -c FILE")
			}
			return writeWACZ(c.Context, dir, c.String("output"), title, text, slog.Default())
		},
	}
}

// writeWACZ packages dir as out (default dir.wacz) and says what it wrote;
// text, when not nil, gives pages.jsonl each page's main text.
func writeWACZ(ctx context.Context, dir, out, title string, text pageText, log *slog.Logger) error {
	if out == "" {
		out = filepath.Clean(dir) + ".wacz"
	}
	start := time.Now()
	st, err := warcsaver.WriteWACZ(ctx, dir, out, warcsaver.WACZOptions{Title: title, Software: "distscrape/" + version, Logger: log, Text: text})
	if err != nil {
		return fmt.Errorf("wacz: %w", err)
	}
	log.Info("wacz written", "file", out, "warcs", st.WARCs, "records", st.Records, "pages", st.Pages,
		"bytes", st.Bytes, "took", time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(os.Stdout, "%s: %d WARC files, %d records, %d pages, %d bytes\n", out, st.WARCs, st.Records, st.Pages, st.Bytes)
	return nil
}

// crawlWACZ packages a one-process crawl's WARC files when it ended
// (saver.wacz); a worker of a fleet only says how.
func crawlWACZ(ctx context.Context, cfg *config.Config, oneProcess bool, log *slog.Logger) error {
	w, ok := cfg.Saver.Driver.(*warcsaver.Section)
	if !ok || !w.WACZ {
		return nil
	}
	if !oneProcess {
		log.Info("saver.wacz: a worker of a fleet does not package; run `distscrape wacz` once every worker has ended",
			"dir", w.Dir)
		return nil
	}
	text, err := mainTextOf(cfg)
	if err != nil {
		return within("extract", err)
	}
	return writeWACZ(context.WithoutCancel(ctx), w.Dir, "", cfg.Crawl, text, log)
}

// pageText gives a page's text for a WACZ's pages.jsonl.
type pageText func(ctx context.Context, url string, html []byte) string

// mainTextOf is the text the crawl's extraction rules take as a page's main
// text (a field with text: main), by the same rules' match; nil when no
// rule has such a field.
func mainTextOf(cfg *config.Config) (pageText, error) {
	var rules []extract.Rule
	for _, r := range cfg.ExtractRules() {
		for _, f := range r.Fields {
			if f.Text == extract.TextMain {
				rules = append(rules, extract.Rule{Name: r.Name, Match: r.Match, OnInvalid: extract.OnInvalidSkip,
					Fields: []extract.Field{{Name: f.Name, Text: extract.TextMain}}})
				break
			}
		}
	}
	if len(rules) == 0 {
		return nil, nil
	}
	ex, err := extract.Compile(rules, extractOptions(cfg))
	if err != nil {
		return nil, err
	}
	field := make(map[string]string, len(rules)) // rule → its main text field
	for _, r := range rules {
		field[r.Name] = r.Fields[0].Name
	}
	return func(ctx context.Context, url string, html []byte) string {
		sets, err := ex.Extract(ctx, &saver.Page{Key: url, URL: url, Status: 200, ContentType: "text/html", Body: html,
			Header: http.Header{"Content-Type": {"text/html"}}})
		if err != nil {
			return ""
		}
		for _, s := range sets {
			for _, rec := range s.Records {
				if t, ok := rec.Fields[field[s.Rule]].(string); ok && t != "" {
					return t
				}
			}
		}
		return ""
	}, nil
}
