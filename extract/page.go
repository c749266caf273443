package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"

	"github.com/distscrape/distscrape/internal/pagetree"
	"github.com/distscrape/distscrape/saver"
)

// Sentinel errors callers branch on.
var (
	// ErrInvalid: a record failed validation in a rule with on_invalid:
	// fail. The error is an *InvalidError.
	ErrInvalid = errors.New("extract: invalid record")
	// ErrBody: a body that cannot be read for the selectors asked: not
	// HTML (or JSON), a charset that cannot be decoded, too large, too many
	// elements, or a selector yielding too many values.
	ErrBody = errors.New("extract: unreadable body")
	// ErrBudget: the page's selectors and regexes ran out of
	// Options.Budget.
	ErrBudget = errors.New("extract: page budget spent")
)

// page is one fetched page prepared for the rules that match it: its body
// decoded and parsed once, whatever the number of fields.
type page struct {
	ctx      context.Context // the caller's
	opt      *Options
	deadline time.Time
	src      *saver.Page
	pageURL  *url.URL // nil when p.URL does not parse
	base     *url.URL // <base href> resolved against pageURL, else pageURL
	text     string   // the body decoded to UTF-8
	runes    []rune   // text, for regexes; made on first use
	doc      *html.Node
	json     any
	walked   int // nodes visited since the last budget check
}

func newPage(ctx context.Context, opt *Options, p *saver.Page) *page {
	pg := &page{ctx: ctx, opt: opt, src: p, deadline: time.Now().Add(opt.Budget)}
	if u, err := url.Parse(p.URL); err == nil {
		pg.pageURL, pg.base = u, u
	}
	return pg
}

// left is the time still available to the page.
func (pg *page) left() time.Duration { return time.Until(pg.deadline) }

// check reports a cancelled context or a spent budget.
func (pg *page) check(what string) error {
	if err := pg.ctx.Err(); err != nil {
		return err
	}
	if pg.left() <= 0 {
		return pg.spent(what)
	}
	return nil
}

// tick is check, done every 1024 nodes a selector visits.
func (pg *page) tick(what string) error {
	pg.walked++
	if pg.walked&1023 != 0 {
		return nil
	}
	return pg.check(what)
}

// spent is the error of a page whose budget ran out during what; the
// caller's own cancellation wins.
func (pg *page) spent(what string) error {
	if err := pg.ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("%w: %s ran out of the page's budget of %v", ErrBudget, what, pg.opt.Budget)
}

func tooMany(what string, max int) error {
	return fmt.Errorf("%w: %s yields more than %d values (max_nodes)", ErrBody, what, max)
}

// load decodes the body and builds what the rules need: the HTML tree, the
// JSON value, or both. The page's budget starts when it returns: parsing
// cannot be cut short (MaxBody and MaxNodes bound it), and counting it
// would make a large page under CPU load fail its budget before any
// selector ran.
func (pg *page) load(needHTML, needJSON bool) error {
	defer func() { pg.deadline = time.Now().Add(pg.opt.Budget) }()
	p := pg.src
	if err := pg.sizeErr(); err != nil {
		return err
	}
	// JSON is UTF-8 (RFC 8259): a JSON body without a charset is never
	// read as windows-1252, its invalid bytes become U+FFFD instead.
	mt := mediaType(p.ContentType, p.Body)
	jsonText := mt == "application/json" || strings.HasSuffix(mt, "+json") || needJSON && !needHTML
	text, err := decode(p.Body, p.ContentType, needHTML, jsonText)
	if err != nil {
		return err
	}
	pg.text = text
	if needHTML {
		if err := pg.parseHTML(); err != nil {
			return err
		}
	}
	if needJSON {
		d := json.NewDecoder(strings.NewReader(text))
		d.UseNumber()
		if err := d.Decode(&pg.json); err != nil {
			return fmt.Errorf("%w: body (%s) is not JSON, which json fields need: %v", ErrBody, mediaType(p.ContentType, p.Body), err)
		}
		if _, err := d.Token(); err != io.EOF {
			return fmt.Errorf("%w: body (%s) is not one JSON value: more follows it", ErrBody, mediaType(p.ContentType, p.Body))
		}
	}
	return nil
}

// sizeErr is the error of a body larger than MaxBody; nil otherwise.
func (pg *page) sizeErr() error {
	if n := len(pg.src.Body); int64(n) > pg.opt.MaxBody {
		return fmt.Errorf("%w: body of %d bytes is larger than the limit of %d (max_body)", ErrBody, n, pg.opt.MaxBody)
	}
	return nil
}

// parseHTML parses the decoded body (buildTree), or takes the tree Offer
// made of it when the link scraper parsed it first, and its <base href>.
func (pg *page) parseHTML() error {
	doc, err, ok := pagetree.Get(pg.ctx, pg.src.Body)
	if !ok {
		doc, err = pg.buildTree()
	}
	if err != nil {
		return err
	}
	pg.doc = doc
	if pg.pageURL != nil {
		if href := baseHref(doc); href != "" {
			if u, err := pg.pageURL.Parse(strings.TrimSpace(href)); err == nil {
				pg.base = u
			}
		}
	}
	return nil
}

// buildTree parses pg.text, refusing a body that is not HTML or that has
// more than MaxNodes elements (counted before the tree is built: a tree
// costs about 200 bytes a node).
func (pg *page) buildTree() (*html.Node, error) {
	p := pg.src
	// What sniffs as text is sniffed again once decoded: a UTF-16 page is
	// text/plain until then.
	head := []byte(pg.text[:min(len(pg.text), 512)])
	mt := mediaType(p.ContentType, p.Body)
	if mt == "text/plain" && p.ContentType == "" {
		mt = mediaType("", head)
	}
	if !htmlType(mt, head) {
		return nil, fmt.Errorf("%w: body is %s, not HTML, which css, xpath and text fields need", ErrBody, mt)
	}
	// Each element takes at least one '<'; count exactly only past that.
	if strings.Count(pg.text, "<") > pg.opt.MaxNodes {
		if n := countElements(pg.text, pg.opt.MaxNodes); n > pg.opt.MaxNodes {
			return nil, fmt.Errorf("%w: page has more than %d elements (max_nodes)", ErrBody, pg.opt.MaxNodes)
		}
	}
	doc, err := html.Parse(strings.NewReader(pg.text))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBody, err)
	}
	return doc, nil
}

// countElements counts start tags, stopping past limit.
func countElements(text string, limit int) int {
	z := html.NewTokenizer(strings.NewReader(text))
	n := 0
	for n <= limit {
		switch z.Next() {
		case html.ErrorToken:
			return n
		case html.StartTagToken, html.SelfClosingTagToken:
			n++
		}
	}
	return n
}

// baseHref is the href of the document's first <base>, as browsers take it.
func baseHref(n *html.Node) string {
	if n.Type == html.ElementNode && n.DataAtom == atom.Base {
		for _, a := range n.Attr {
			if a.Key == "href" && a.Namespace == "" {
				return a.Val
			}
		}
	}
	if n.Type == html.ElementNode && n.DataAtom == atom.Body {
		return ""
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if h := baseHref(c); h != "" {
			return h
		}
	}
	return ""
}

// mediaType is the body's media type, from Content-Type or, when that says
// nothing, sniffed.
func mediaType(contentType string, body []byte) string {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		return strings.ToLower(mt)
	}
	mt, _, _ := strings.Cut(http.DetectContentType(body), ";")
	return mt
}

// htmlType says whether a body of media type mt can be parsed as HTML. A
// body that declares no type, or text/plain (often a server's default),
// is HTML when it starts with markup.
func htmlType(mt string, body []byte) bool {
	switch mt {
	case "text/html", "application/xhtml+xml", "text/xml", "application/xml":
		return true
	case "text/plain":
		return bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n\f\xef\xbb\xbf"), []byte("<"))
	}
	return strings.HasSuffix(mt, "+xml")
}

// decode returns body as UTF-8: by the Content-Type's charset, else a BOM,
// else (for HTML) a <meta> charset in the first 1024 bytes, else UTF-8 when
// the body is valid UTF-8 or utf8Only (JSON), else windows-1252 as the
// HTML standard says. UTF-8 text comes out valid: an invalid sequence
// becomes U+FFFD. A charset named but unknown, or one that cannot be
// decoded, is ErrBody.
func decode(body []byte, contentType string, sniffMeta, utf8Only bool) (string, error) {
	label, from := "", ""
	if _, params, err := mime.ParseMediaType(contentType); err == nil && params["charset"] != "" {
		label, from = params["charset"], "Content-Type"
	}
	if label == "" {
		switch {
		case bytes.HasPrefix(body, []byte("\xef\xbb\xbf")):
			return strings.ToValidUTF8(string(body[3:]), "\uFFFD"), nil
		case bytes.HasPrefix(body, []byte("\xfe\xff")):
			label, from = "utf-16be", "byte order mark"
		case bytes.HasPrefix(body, []byte("\xff\xfe")):
			label, from = "utf-16le", "byte order mark"
		}
	}
	if label == "" && sniffMeta {
		label, from = metaCharset(body), "<meta>"
	}
	if label == "" {
		if utf8.Valid(body) {
			return string(body), nil
		}
		if utf8Only {
			return strings.ToValidUTF8(string(body), "\uFFFD"), nil
		}
		return decodeWith(charmap.Windows1252, body)
	}
	enc, name := charset.Lookup(label)
	if enc == nil {
		return "", fmt.Errorf("%w: charset %q (%s) is not one we know", ErrBody, label, from)
	}
	switch name {
	case "replacement":
		return "", fmt.Errorf("%w: charset %q (%s) cannot be decoded", ErrBody, label, from)
	case "utf-8":
		body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
		if utf8.Valid(body) {
			return string(body), nil
		}
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	return decodeWith(enc, body)
}

func decodeWith(enc encoding.Encoding, body []byte) (string, error) {
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return "", fmt.Errorf("%w: cannot decode the body: %v", ErrBody, err)
	}
	return string(out), nil
}

// metaCharset finds the charset of a <meta charset> or <meta
// http-equiv=content-type> in the first 1024 bytes, as browsers prescan.
func metaCharset(body []byte) string {
	if len(body) > 1024 {
		body = body[:1024]
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "meta" {
				continue
			}
			var cs, content string
			httpEquiv := false
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "charset":
					cs = string(v)
				case "content":
					content = string(v)
				case "http-equiv":
					httpEquiv = strings.EqualFold(string(v), "content-type")
				}
			}
			if cs == "" && httpEquiv {
				if _, params, err := mime.ParseMediaType(content); err == nil {
					cs = params["charset"]
				}
			}
			if cs = strings.TrimSpace(cs); cs != "" {
				// A page cannot be UTF-16 if it was read as ASCII to get here.
				if l := strings.ToLower(cs); strings.HasPrefix(l, "utf-16") {
					return "utf-8"
				}
				return cs
			}
		}
	}
}
