package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/gocolly/colly/v2"
)

// collyRecord is one page's record as the Colly contender writes it: the
// five fields of a fixture page of Options.Data, typed as distscrape types
// them, and its main text when -main is set.
type collyRecord struct {
	URL       string    `json:"url"`
	Title     string    `json:"title"`
	Price     float64   `json:"price"`
	Published time.Time `json:"published"`
	Category  string    `json:"category"`
	Author    string    `json:"author"`
	Body      string    `json:"body,omitempty"`
}

// recordWriter writes records as JSON lines into one file, the way a Colly
// user keeps them: one encoder behind a mutex, buffered, fsynced once when
// the crawl ends (not per group, as distscrape's jsonl sink does).
type recordWriter struct {
	mu  sync.Mutex
	f   *os.File
	buf *bufio.Writer
	enc *json.Encoder
	n   int64
	err error // the first write error: the crawl fails with it
}

func newRecordWriter(path string) (*recordWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	buf := bufio.NewWriterSize(f, 64<<10)
	return &recordWriter{f: f, buf: buf, enc: json.NewEncoder(buf)}, nil
}

func (w *recordWriter) write(r *collyRecord) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	if w.err = w.enc.Encode(r); w.err == nil {
		w.n++
	}
}

func (w *recordWriter) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	for _, e := range []error{w.buf.Flush(), w.f.Sync(), w.f.Close()} {
		if err == nil {
			err = e
		}
	}
	return err
}

// onFields registers the extraction on c: the five fields through one
// OnHTML callback (Colly's goquery), and with withMain the page's main text
// by go-readability over the same parsed tree, registered after the
// fields and links so that its rewriting of the tree comes last. A page
// missing a field or with a field of the wrong type fails the crawl (bad
// records counted in bad), as a required field fails a distscrape page.
func onFields(c *colly.Collector, w *recordWriter, withMain bool, bad *badCount) {
	c.OnHTML("html", func(e *colly.HTMLElement) {
		r := &collyRecord{URL: e.Request.URL.String(), Title: e.ChildText("h1#top"),
			Category: e.ChildText("span.category"), Author: e.ChildText("span.author")}
		var err error
		if r.Price, err = parsePrice(e.ChildText("span.price")); err != nil {
			bad.add(r.URL, err)
			return
		}
		if r.Published, err = time.Parse(time.RFC3339, e.ChildAttr("time[datetime]", "datetime")); err != nil {
			bad.add(r.URL, err)
			return
		}
		if r.Title == "" || r.Category == "" || r.Author == "" {
			bad.add(r.URL, fmt.Errorf("a field is empty: %+v", *r))
			return
		}
		if withMain {
			if r.Body, err = mainText(e); err != nil {
				bad.add(r.URL, err)
				return
			}
		}
		w.write(r)
	})
}

// mainText runs readability over e's document, which it rewrites.
func mainText(e *colly.HTMLElement) (string, error) {
	doc := e.DOM.Nodes[0]
	if doc.Parent != nil {
		doc = doc.Parent // the document node above <html>
	}
	p := readability.NewParser()
	art, err := p.ParseAndMutate(doc, e.Request.URL)
	if err != nil {
		return "", fmt.Errorf("readability: %w", err)
	}
	if art.Node == nil {
		return "", fmt.Errorf("readability: no main text")
	}
	var b strings.Builder
	if err := art.RenderText(&b); err != nil {
		return "", fmt.Errorf("readability: %w", err)
	}
	return b.String(), nil
}

// parsePrice reads the fixture's "€1,234.50".
func parsePrice(s string) (float64, error) {
	s = strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(s), "€"), ",", "")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("price %q: %w", s, err)
	}
	return v, nil
}

// badCount counts pages whose fields were missing or malformed, keeping
// the first reason.
type badCount struct {
	mu    sync.Mutex
	n     int
	first string
}

func (b *badCount) add(u string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n == 0 {
		b.first = u + ": " + err.Error()
	}
	b.n++
}

func (b *badCount) err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n == 0 {
		return nil
	}
	return fmt.Errorf("colly: %d pages without their fields, the first %s", b.n, b.first)
}
