package fixturesite

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
)

// fillerSlack is how far into the shared filler a page's text may start, so
// pages differ in their text too (not only in their links).
const fillerSlack = 4096

var (
	notFoundBody = []byte("<!DOCTYPE html>\n<html><head><title>Not found</title></head><body><h1>404 not found</h1></body></html>\n")
	brokenBody   = []byte("<!DOCTYPE html>\n<html><head><title>Error</title></head><body><h1>500 internal error</h1></body></html>\n")
)

// Render builds every response for the site served at base (e.g.
// "http://127.0.0.1:8088"); absolute links use it. Start calls it; call it
// yourself before serving the Site as an http.Handler elsewhere (until then
// every request gets 503).
func (s *Site) Render(base string) {
	base = strings.TrimSuffix(base, "/")
	filler := makeFiller(s.opts.Seed, s.opts.PageSize+fillerSlack)
	c := &content{base: base, pages: make([]rendered, s.opts.Pages), items: make([]rendered, s.opts.IDs),
		mirror: mirrorPages(base, s.opts.Offsite), robots: s.robots}
	if s.opts.SitemapInRobots {
		c.robots = append(append([]byte(nil), s.robots...), "\nSitemap: "+base+SitemapIndexPath+"\n"...)
	}
	var b bytes.Buffer
	for i := range c.pages {
		switch s.status[i] {
		case statusNotFound:
			c.pages[i] = whole(notFoundBody)
		case statusBroken:
			c.pages[i] = whole(brokenBody)
		default:
			b.Reset()
			s.pageHead(&b, base, i)
			ft := foot
			if s.opts.Data {
				ft = dataFoot
			}
			c.pages[i] = s.withFillerFoot(b.Bytes(), filler, ft, i)
		}
	}
	for id := 1; id <= s.opts.IDs; id++ {
		b.Reset()
		s.itemHead(&b, id)
		c.items[id-1] = s.withFiller(b.Bytes(), filler, id)
	}
	s.content.Store(c)
}

func whole(body []byte) rendered {
	return rendered{head: body, contentLength: []string{strconv.Itoa(len(body))}}
}

var foot = []byte("\n</div>\n</body>\n</html>\n")

// withFiller pads head with shared filler text to about PageSize bytes.
func (s *Site) withFiller(head, filler []byte, n int) rendered {
	return s.withFillerFoot(head, filler, foot, n)
}

// withFillerFoot is withFiller with another foot.
func (s *Site) withFillerFoot(head, filler, foot []byte, n int) rendered {
	head = append([]byte(nil), head...)
	need := max(0, s.opts.PageSize-len(head)-len(foot))
	off := (n * 37) % fillerSlack
	r := rendered{head: head, filler: filler[off : off+need], foot: foot}
	r.contentLength = []string{strconv.Itoa(len(head) + need + len(foot))}
	return r
}

// pageHead writes page i's HTML up to its text: title, links, and the links
// a crawler must not follow; with Options.Data, the boilerplate and fields
// of data.go around them.
func (s *Site) pageHead(b *bytes.Buffer, base string, i int) {
	title := "Page " + strconv.Itoa(i)
	b.WriteString("<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\"><title>" + title + "</title></head>\n<body>\n")
	data, isData := s.PageData(i)
	if isData {
		writeMasthead(b)
	}
	b.WriteString("<h1 id=\"top\">" + title + "</h1>\n<ul>\n")
	for k, j := range s.links[i] {
		b.WriteString(`<li><a href="` + linkForm(base, i, j, k) + `">page ` + strconv.Itoa(j) + "</a></li>\n")
	}
	b.WriteString("</ul>\n<p>")
	if len(s.links[i]) > 0 { // the first link again, differently written
		b.WriteString(`<a href="` + base + PagePath(s.links[i][0]) + `#again">again</a> `)
	}
	b.WriteString(`<a href="` + s.opts.Offsite + "page/" + strconv.Itoa(i) + `.html">elsewhere</a> ` +
		`<a href="mailto:webmaster@offsite.invalid">mail</a> ` +
		`<a href="javascript:void(0)">script</a></p>` + "\n")
	if isData {
		writeArticleHead(b, data)
		return
	}
	b.WriteString("<div class=\"text\">\n")
}

// linkForm writes the link from page i to page j in one of the forms a
// crawler must resolve, chosen by slot k.
func linkForm(base string, i, j, k int) string {
	target := PagePath(j)
	switch (i + k) % 6 {
	case 0: // relative to the page's directory
		switch {
		case i == 0:
			return "." + target
		case j == 0:
			return "../"
		}
		return strconv.Itoa(j) + ".html"
	case 1:
		return target
	case 2:
		return base + target
	case 3:
		return target + "#s" + strconv.Itoa(k)
	case 4: // through the parent directory
		if i == 0 {
			return "./" + target[1:]
		}
		return ".." + target
	}
	return base + target + "#top"
}

// itemHead writes item id's HTML up to its text: its data-id references,
// and attributes that look like references but are not.
func (s *Site) itemHead(b *bytes.Buffer, id int) {
	title := "Item " + strconv.Itoa(id)
	b.WriteString("<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\"><title>" + title + "</title></head>\n<body>\n<h1>" + title + "</h1>\n<ul>\n")
	for _, r := range s.refs[id-1] {
		n := strconv.Itoa(r)
		b.WriteString(`<li data-id="` + n + `">item ` + n + "</li>\n")
	}
	b.WriteString("</ul>\n<p data-idx=\"" + strconv.Itoa(id+1000000) + "\">not a reference</p>\n<div class=\"text\">\n")
}

var words = strings.Fields(`lorem ipsum dolor sit amet consectetur adipiscing elit sed do
eiusmod tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis
nostrud exercitation ullamco laboris nisi aliquip ex ea commodo consequat duis aute irure
in reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat
cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum`)

// makeFiller returns n bytes of seeded plain text (no markup, so any slice
// of it is valid inside a div).
func makeFiller(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0xf111))
	b := make([]byte, 0, n+16)
	for line := 0; len(b) < n; line++ {
		b = append(b, words[r.IntN(len(words))]...)
		if line%12 == 11 {
			b = append(b, '\n')
		} else {
			b = append(b, ' ')
		}
	}
	return b[:n]
}
