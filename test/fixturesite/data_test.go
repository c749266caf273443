package fixturesite_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/distscrape/distscrape/test/fixturesite"
)

// TestDataPages: with Options.Data every good page carries PageData where
// the selectors of data.go find it, its text inside the article and the
// boilerplate outside, and the same links and size as without Data.
func TestDataPages(t *testing.T) {
	o := fixturesite.Options{Pages: 60, Links: 10, PageSize: 4096, NotFound: 2, Broken: 2}
	plain := fixturesite.Start(t, o)
	o.Data = true
	data := fixturesite.Start(t, o)
	if len(plain.Pages()) != len(data.Pages()) {
		t.Fatalf("%d pages with Data, %d without", len(data.Pages()), len(plain.Pages()))
	}
	notFound, broken := data.FailingPages()
	failing := map[string]bool{}
	for _, u := range append(notFound, broken...) {
		failing[strings.TrimPrefix(u, data.URL())] = true
	}
	categories, authors := map[string]bool{}, map[string]bool{}
	for i := range o.Pages {
		path := fixturesite.PagePath(i)
		pb, pst, _ := plain.Body(path)
		db, dst, ok := data.Body(path)
		if !ok || pst != dst {
			t.Fatalf("%s: status %d with Data, %d without", path, dst, pst)
		}
		d, isData := data.PageData(i)
		if failing[path] {
			if isData || !bytes.Equal(pb, db) {
				t.Fatalf("%s answers %d: want no PageData and the same error page", path, dst)
			}
			continue
		}
		if !isData {
			t.Fatalf("%s: no PageData", path)
		}
		if len(db) != len(pb) {
			t.Fatalf("%s: %d bytes with Data, %d without", path, len(db), len(pb))
		}
		// Links come from the plain page's base URL; compare paths.
		pl, dl := hrefs(pb, plain.URL()), hrefs(db, data.URL())
		if strings.Join(pl, " ") != strings.Join(dl, " ") {
			t.Fatalf("%s: links with Data %v, without %v", path, dl, pl)
		}
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(db))
		if err != nil {
			t.Fatal(err)
		}
		dt, _ := doc.Find("time[datetime]").Attr("datetime")
		got := []string{doc.Find("h1#top").Text(), doc.Find("span.price").Text(), dt,
			doc.Find("span.category").Text(), doc.Find("span.author").Text()}
		want := []string{d.Title, "", d.Published.Format(time.RFC3339), d.Category, d.Author}
		if p := strings.NewReplacer("€", "", ",", "").Replace(got[1]); p != strconv.FormatFloat(d.Price, 'f', 2, 64) {
			t.Errorf("%s: price %q, want %.2f", path, got[1], d.Price)
		}
		got[1] = ""
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: fields %q, want %q", path, got, want)
		}
		text := doc.Find("article div.text").Text()
		if len(text) < o.PageSize/2 {
			t.Errorf("%s: %d bytes of article text, want most of the page", path, len(text))
		}
		outside := doc.Find("body").Clone()
		outside.Find("article").Remove()
		for _, b := range fixturesite.DataBoilerplate {
			if strings.Contains(doc.Find("article").Text(), b) || !strings.Contains(outside.Text(), b) {
				t.Errorf("%s: boilerplate %q not outside the article", path, b)
			}
		}
		categories[d.Category], authors[d.Author] = true, true
	}
	if len(categories) < 3 || len(authors) < 5 {
		t.Fatalf("%d categories and %d authors over the pages: want them to vary", len(categories), len(authors))
	}
	if _, ok := plain.PageData(1); ok {
		t.Fatal("PageData without Options.Data")
	}
}

// TestDataPrices: prices of every magnitude render as "€" with thousands
// grouped and two decimals, the form extract's float conversion reads.
func TestDataPrices(t *testing.T) {
	s := fixturesite.Start(t, fixturesite.Options{Pages: 2000, Links: 2, PageSize: 512, Data: true})
	seen := map[int]bool{} // digits before the point
	for i := range 2000 {
		d, _ := s.PageData(i)
		body, _, _ := s.Body(fixturesite.PagePath(i))
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got := doc.Find("span.price").Text()
		whole := strconv.FormatInt(int64(d.Price), 10)
		var g []string
		for len(whole) > 3 {
			g, whole = append([]string{whole[len(whole)-3:]}, g...), whole[:len(whole)-3]
		}
		want := "€" + strings.Join(append([]string{whole}, g...), ",") + strconv.FormatFloat(d.Price-float64(int64(d.Price)), 'f', 2, 64)[1:]
		if got != want {
			t.Fatalf("page %d: price %q, want %q (%v)", i, got, want, d.Price)
		}
		seen[len(strconv.FormatInt(int64(d.Price), 10))] = true
	}
	for _, n := range []int{1, 2, 3, 4} {
		if !seen[n] {
			t.Errorf("no price with %d digits before the point in 2000 pages", n)
		}
	}
}

func hrefs(body []byte, base string) []string {
	var out []string
	for _, m := range hrefRE.FindAllSubmatch(body, -1) {
		out = append(out, strings.TrimPrefix(string(m[1]), base))
	}
	return out
}
