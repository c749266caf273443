package fixturesite

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"time"
)

// PageData is what Options.Data puts in a link-site page for a scraper to
// take: five fields a CSS selector finds, and the page's text as an article
// among boilerplate.
//
//	title     h1#top                      "Page 7"
//	price     span.price                  "€1,234.50" (Price 1234.5)
//	published time[datetime], attribute   RFC 3339, UTC (Published)
//	category  span.category               one of a few words
//	author    span.author                 "Firstname Lastname"
//
// The text is in <article><div class="text">, after the page's list of
// links; a masthead before the links and a footer after the article hold
// DataBoilerplate, which belongs in no main text. None of it adds a link.
type PageData struct {
	Title     string
	Price     float64 // in euros, two decimals
	Published time.Time
	Category  string
	Author    string
}

// DataBoilerplate are the phrases around every Options.Data page's text.
var DataBoilerplate = []string{dataMasthead, dataMenu, dataFooter, dataCookies}

const (
	dataMasthead = "The Fixture Catalogue, updated daily"
	dataMenu     = "Home · Catalogue · Offers · Contact"
	dataFooter   = "Copyright 2026 Fixture Press. All rights reserved."
	dataCookies  = "We use cookies to improve your experience."
)

var (
	dataCategories = []string{"Kitchen", "Garden", "Books", "Tools", "Music", "Travel", "Toys"}
	dataFirst      = []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Ken", "Margaret", "Dennis"}
	dataLast       = []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Thompson", "Hamilton", "Ritchie"}
	dataEpoch      = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
)

// PageData returns the fields of page i as Options.Data renders them; ok
// is false without Options.Data, and for a page that answers 404 or 500.
func (s *Site) PageData(i int) (d PageData, ok bool) {
	if !s.opts.Data || i < 0 || i >= len(s.status) || s.status[i] != statusOK {
		return PageData{}, false
	}
	r := rand.New(rand.NewPCG(s.opts.Seed, uint64(2<<32+i)))
	return PageData{
		Title:     "Page " + strconv.Itoa(i),
		Price:     float64(100+r.IntN(500000)) / 100,
		Published: dataEpoch.Add(time.Duration(r.IntN(365*24*3600)) * time.Second),
		Category:  dataCategories[r.IntN(len(dataCategories))],
		Author:    dataFirst[r.IntN(len(dataFirst))] + " " + dataLast[r.IntN(len(dataLast))],
	}, true
}

// formatPrice writes p as "€1,234.50".
func formatPrice(p float64) string {
	cents := int64(p*100 + 0.5)
	whole := strconv.FormatInt(cents/100, 10)
	var b []byte
	for k := range len(whole) {
		if k > 0 && (len(whole)-k)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, whole[k])
	}
	frac := cents % 100
	return "€" + string(b) + "." + string(rune('0'+frac/10)) + string(rune('0'+frac%10))
}

// writeMasthead writes the boilerplate before a page's links.
func writeMasthead(b *bytes.Buffer) {
	b.WriteString("<header class=\"masthead\"><p>" + dataMasthead + "</p>\n<nav class=\"menu\"><p>" + dataMenu + "</p></nav></header>\n")
}

// writeArticleHead opens a page's article: the fields, then the text's div.
func writeArticleHead(b *bytes.Buffer, d PageData) {
	b.WriteString("<main>\n<article>\n<p class=\"meta\">By <span class=\"author\">" + d.Author + "</span> on <time datetime=\"" +
		d.Published.Format(time.RFC3339) + "\">" + d.Published.Format("January 2, 2006") + "</time> in <span class=\"category\">" +
		d.Category + "</span></p>\n<p class=\"offer\">Price: <span class=\"price\">" + formatPrice(d.Price) + "</span></p>\n<div class=\"text\">\n")
}

// dataFoot closes a page of Options.Data: the text's div, the article, and
// the footer.
var dataFoot = []byte("\n</div>\n</article>\n</main>\n<footer><p>" + dataFooter + "</p>\n<p>" + dataCookies + "</p></footer>\n</body>\n</html>\n")
