package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/extract"
	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/sqlitesink"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/saver/tarsaver"
	"github.com/distscrape/distscrape/saver/warcsaver"
)

// shopPages are product pages, one a captcha page that fails its rule.
func shopPages() []*saver.Page {
	var ps []*saver.Page
	for i := 1; i <= 3; i++ {
		body := fmt.Sprintf(`<html><h1>Product %d</h1><span class=price>$%d.50</span><a class=more href="/shop/p/%d/more">more</a></html>`, i, i, i)
		if i == 3 {
			body = `<html><h1>Are you a robot?</h1></html>`
		}
		u := fmt.Sprintf("http://shop.test/shop/p/%d", i)
		ps = append(ps, &saver.Page{Key: u, URL: u, Status: 200, ContentType: "text/html; charset=utf-8",
			FetchedAt: saverTime.Add(timeStep * 1), Body: []byte(body), Labels: []string{"shop"}})
	}
	ps = append(ps, &saver.Page{Key: "http://shop.test/about", URL: "http://shop.test/about", Status: 200,
		ContentType: "text/html", FetchedAt: saverTime, Body: []byte("<p>about</p>")})
	return ps
}

func shopExtractor(t *testing.T) *extract.Extractor {
	t.Helper()
	ex, err := extract.Compile([]extract.Rule{{Name: "product", Match: `/shop/p/\d+$`, Fields: []extract.Field{
		{Name: "name", CSS: "h1", Type: record.String, Required: true},
		{Name: "price", CSS: ".price", Type: record.Float, Required: true},
		{Name: "more", CSS: "a.more", Attr: "href", Type: record.URL},
	}}}, extract.Options{Crawl: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func saveAll(t *testing.T, s saver.Saver, pages []*saver.Page) {
	t.Helper()
	ctx := context.Background()
	for _, p := range pages {
		if err := s.Save(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// Each store kind is found by what --from names and re-extracted into
// SQLite: the same rows whatever the store, the captcha page failed and
// reported, the counts per rule printed.
func TestReextractStores(t *testing.T) {
	stores := map[string]func(t *testing.T) string{
		"file": func(t *testing.T) string {
			dir := t.TempDir()
			s, err := filesaver.New(filesaver.Config{Dir: dir, Crawl: "shop", Worker: "w"})
			if err != nil {
				t.Fatal(err)
			}
			saveAll(t, s, shopPages())
			return dir
		},
		"warc": func(t *testing.T) string {
			dir := t.TempDir()
			s, err := warcsaver.New(warcsaver.Config{Dir: dir, Crawl: "shop", Worker: "w"})
			if err != nil {
				t.Fatal(err)
			}
			saveAll(t, s, shopPages())
			return dir
		},
		"tar": func(t *testing.T) string {
			path := filepath.Join(t.TempDir(), "shop.tar.gz")
			s, err := tarsaver.New(tarsaver.Config{Path: path, Crawl: "shop", Worker: "w"})
			if err != nil {
				t.Fatal(err)
			}
			saveAll(t, s, shopPages())
			return path
		},
	}
	var first []record.Set
	for _, kind := range []string{"file", "tar", "warc"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			from := stores[kind](t)
			src, got, err := openSource(&config.Config{Crawl: "shop"}, from, "")
			if err != nil || got != kind {
				t.Fatalf("openSource(%s): kind %q, %v; want %s", from, got, err, kind)
			}
			ex := shopExtractor(t)
			db := filepath.Join(t.TempDir(), "records.db")
			sink, err := sqlitesink.New(ctx, sqlitesink.Config{Path: db}, record.Options{Crawl: "shop", Schemas: ex.Schemas()})
			if err != nil {
				t.Fatal(err)
			}
			res, err := reextract(ctx, src, ex, sink, nil, slog.New(slog.NewTextHandler(os.Stderr, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if err := sink.Close(ctx); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			printReextracted(&out, kind, from, res, ex.Counts(), []string{"product"}, nil)
			if !strings.Contains(out.String(), "read 4 pages") || !regexpLine(out.String(), `product\s+3\s+2\s+1`) ||
				!strings.Contains(out.String(), "1 pages failed extraction") || !strings.Contains(out.String(), "required, not found") {
				t.Errorf("report:\n%s", out.String())
			}
			rd, err := sqlitesink.NewReader(ctx, db, "shop")
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			sets, err := rd.Sets(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(sets) != 2 || sets[0].Records[0].Fields["price"] != 1.5 || sets[1].Records[0].Fields["more"] != "http://shop.test/shop/p/2/more" {
				t.Fatalf("rows %+v", sets)
			}
			if first == nil {
				first = sets
			} else if !reflect.DeepEqual(first, sets) {
				t.Errorf("rows from %s differ from the first store's:\n%+v\n%+v", kind, sets, first)
			}
		})
	}
}

func TestDetectKindRefuses(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.warc.gz"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "b.tar"), nil, 0o644)
	txt := filepath.Join(t.TempDir(), "x.txt")
	os.WriteFile(txt, nil, 0o644)
	for name, tc := range map[string]struct{ from, want string }{
		"both kinds":      {dir, "--kind warc or --kind tar"},
		"empty directory": {t.TempDir(), "no store there"},
		"a text file":     {txt, "not a .warc(.gz) file or a tar archive"},
		"missing":         {filepath.Join(dir, "missing"), "no such file"},
	} {
		if _, err := detectKind(tc.from); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	if _, _, err := openSource(&config.Config{}, dir, "ftp"); err == nil || !strings.Contains(err.Error(), "file, redis, s3, tar, warc") {
		t.Errorf("--kind ftp: %v", err)
	}
	if _, _, err := openSource(&config.Config{}, "s3:///prefix", ""); err == nil || !strings.Contains(err.Error(), "s3://BUCKET") {
		t.Errorf("s3 without a bucket: %v", err)
	}
}

var saverTime = time.Date(2026, 11, 20, 10, 0, 0, 123456789, time.UTC)

const timeStep = time.Second

func regexpLine(s, re string) bool { return regexp.MustCompile(re).MatchString(s) }
