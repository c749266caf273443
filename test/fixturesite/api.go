package fixturesite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The shop's JSON API, over the same products as its pages:
//
//   - GET APIItemsPath?page=N (page 1 without a query) answers
//     {"page": N, "items": [APIItem...], "next": "/api/items?page=N+1"}, with
//     APIPageSize items a page and "next" null on the last one. A page that
//     is not a canonical decimal (0, 01, -1, x, or page given twice) is 400,
//     one past the last 404.
//   - POST APIItemPath with Content-Type application/json (charset utf-8 or
//     none) and the body {"id": ID} (a JSON number or a string of decimal
//     digits) answers the item's APIItem. A missing, empty, malformed or
//     non-object body, a missing or non-integer id, another Content-Type, or
//     anything after the object is 400; an unknown id 404; a body over
//     maxAPIBody 413; another method 405.
//
// Every answer is JSON; an error is {"error": "what is wrong"}.

// API paths and page size.
const (
	APIItemsPath = "/api/items"
	APIItemPath  = "/api/item"
	APIPageSize  = 10
)

// maxAPIBody bounds a POST body.
const maxAPIBody = 64 << 10

// APIItem is a product as the API answers it (Product has the same values).
type APIItem struct {
	ID       int      `json:"id"`
	Name     string   `json:"name"`
	Price    float64  `json:"price"`
	Currency string   `json:"currency"`
	InStock  bool     `json:"in_stock"`
	Rating   int      `json:"rating"`
	Updated  string   `json:"updated"` // RFC 3339, UTC
	Tags     []string `json:"tags"`
	Image    string   `json:"image"` // a path, as Product.Image
	URL      string   `json:"url"`   // the detail page's path
	// Related are other IDs (Product.Related): only the POST answer has
	// them, for an ID crawl that discovers IDs through a JSON path.
	Related []int `json:"related,omitempty"`
}

// APIPagePath is the path and query of API page n: /api/items?page={n}.
func APIPagePath(n int) string { return APIItemsPath + "?page=" + strconv.Itoa(n) }

// APIItems returns every item the API serves, by ID: its count is the
// number of products.
func (s *Site) APIItems() []APIItem {
	out := make([]APIItem, len(s.shop.products))
	for i, p := range s.shop.products {
		out[i] = apiItemOf(p, true)
	}
	return out
}

// APIPages is the number of pages of APIItemsPath.
func (s *Site) APIPages() int { return max(1, (len(s.shop.products)+APIPageSize-1)/APIPageSize) }

func apiItemOf(p Product, related bool) APIItem {
	it := APIItem{ID: p.ID, Name: p.Name, Price: p.Price, Currency: p.Currency, InStock: p.InStock,
		Rating: p.Rating, Updated: p.Updated.Format(time.RFC3339), Tags: append([]string(nil), p.Tags...),
		Image: p.Image, URL: ProductPath(p.ID)}
	if related {
		it.Related = append([]int(nil), p.Related...)
	}
	return it
}

// buildAPI renders every page and item answer once.
func (sh *shopSite) buildAPI() {
	n := len(sh.products)
	pages := max(1, (n+APIPageSize-1)/APIPageSize)
	for pg := 1; pg <= pages; pg++ {
		page := struct {
			Page  int       `json:"page"`
			Items []APIItem `json:"items"`
			Next  *string   `json:"next"`
		}{Page: pg, Items: []APIItem{}}
		for _, p := range sh.products[(pg-1)*APIPageSize : min(pg*APIPageSize, n)] {
			page.Items = append(page.Items, apiItemOf(p, false))
		}
		if pg < pages {
			next := APIPagePath(pg + 1)
			page.Next = &next
		}
		sh.apiPages = append(sh.apiPages, mustJSON(page))
	}
	for _, p := range sh.products {
		sh.apiItems = append(sh.apiItems, mustJSON(apiItemOf(p, true)))
	}
}

// mustJSON encodes v, whose types cannot fail to encode, as an API writes
// it: '<', '>' and '&' as they are, and a final newline.
func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(`{"error":"fixturesite: cannot encode"}` + "\n")
	}
	return b.Bytes()
}

// serves says whether the shop answers path (its path part) with success:
// a known page, the API's item, or an API page that exists.
func (sh *shopSite) serves(uri string) bool {
	p, q, _ := strings.Cut(uri, "?")
	switch p {
	case APIItemPath:
		return true
	case APIItemsPath:
		_, status, _ := sh.apiPage(q)
		return status == http.StatusOK
	}
	return sh.pages[p] != nil
}

// handles says whether path belongs to the shop, answered by serve.
func (sh *shopSite) handles(path string) bool {
	return path == APIItemPath || path == APIItemsPath || sh.pages[path] != nil
}

// serve answers a request for a path handles accepted.
func (sh *shopSite) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case APIItemsPath:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeJSON(w, http.StatusMethodNotAllowed, errJSON("use GET"))
			return
		}
		body, status, msg := sh.apiPage(r.URL.RawQuery)
		if status != http.StatusOK {
			body = errJSON(msg)
		}
		writeJSON(w, status, body)
	case APIItemPath:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeJSON(w, http.StatusMethodNotAllowed, errJSON("use POST with a JSON body {\"id\": ID}"))
			return
		}
		id, status, err := readItemID(r)
		switch {
		case err != nil:
			writeJSON(w, status, errJSON(err.Error()))
		case id < 1 || id > len(sh.apiItems):
			writeJSON(w, http.StatusNotFound, errJSON(fmt.Sprintf("no item %d (IDs are 1..%d)", id, len(sh.apiItems))))
		default:
			writeJSON(w, http.StatusOK, sh.apiItems[id-1])
		}
	default:
		a := sh.pages[r.URL.Path]
		h := w.Header()
		h["Content-Type"] = a.contentType
		h["Content-Length"] = a.contentLen
		_, _ = w.Write(a.body)
	}
}

// apiPage returns the answer to APIItemsPath with rawQuery, or the status
// and message of its error.
func (sh *shopSite) apiPage(rawQuery string) (body []byte, status int, msg string) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, http.StatusBadRequest, "bad query: " + err.Error()
	}
	pg := 1
	if v, ok := q["page"]; ok {
		if len(v) != 1 {
			return nil, http.StatusBadRequest, "page given more than once"
		}
		n, ok := atoi(v[0])
		if !ok {
			return nil, http.StatusBadRequest, fmt.Sprintf("page %q is not a page number (1, 2, ...)", v[0])
		}
		pg = n
	}
	if pg > len(sh.apiPages) {
		return nil, http.StatusNotFound, fmt.Sprintf("no page %d (pages are 1..%d)", pg, len(sh.apiPages))
	}
	return sh.apiPages[pg-1], http.StatusOK, ""
}

// readItemID reads the id of a POST to APIItemPath, or says what is wrong
// with the request and its status.
func readItemID(r *http.Request) (int, int, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return 0, http.StatusBadRequest, errors.New("missing Content-Type: send application/json")
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return 0, http.StatusBadRequest, fmt.Errorf("Content-Type %q: send application/json", ct)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return 0, http.StatusBadRequest, fmt.Errorf("charset %q: send utf-8", cs)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxAPIBody+1))
	if err != nil {
		return 0, http.StatusBadRequest, fmt.Errorf("reading the body: %w", err)
	}
	if len(body) > maxAPIBody {
		return 0, http.StatusRequestEntityTooLarge, fmt.Errorf("body over %d bytes", maxAPIBody)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return 0, http.StatusBadRequest, errors.New(`missing body: send {"id": ID}`)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var req map[string]any
	if err := dec.Decode(&req); err != nil || req == nil {
		return 0, http.StatusBadRequest, errors.New(`body is not a JSON object: send {"id": ID}`)
	}
	if _, err := dec.Token(); err != io.EOF {
		return 0, http.StatusBadRequest, errors.New("body has data after its JSON object")
	}
	raw, ok := req["id"]
	if !ok {
		return 0, http.StatusBadRequest, errors.New(`body has no "id"`)
	}
	var s string
	switch v := raw.(type) {
	case json.Number:
		s = v.String()
	case string:
		s = v
	default:
		return 0, http.StatusBadRequest, fmt.Errorf(`"id" is a %s, not a number`, jsonKind(v))
	}
	id, ok := atoi(s)
	if !ok {
		return 0, http.StatusBadRequest, fmt.Errorf(`"id" %q is not an item ID (1, 2, ...)`, s)
	}
	return id, http.StatusOK, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func errJSON(msg string) []byte {
	return mustJSON(struct {
		Error string `json:"error"`
	}{msg})
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
