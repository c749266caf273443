package fixturesite_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
)

type apiPage struct {
	Page  int                   `json:"page"`
	Items []fixturesite.APIItem `json:"items"`
	Next  *string               `json:"next"`
}

// do sends one request and returns its status, Content-Type and body.
func do(t *testing.T, method, u, contentType, body string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// TestAPIPaging follows "next" from APIItemsPath, as a JSON API crawl
// would, and gets every item once, equal to APIItems (without Related),
// for several product counts; the last page's next is null.
func TestAPIPaging(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 10, 11, 45} {
		s, base := start(t, fixturesite.Options{Pages: 2, Products: n})
		var got []fixturesite.APIItem
		next, pages := fixturesite.APIItemsPath, 0
		for next != "" {
			if pages++; pages > s.APIPages() {
				t.Fatalf("%d items: past APIPages %d", n, s.APIPages())
			}
			status, ct, body := do(t, http.MethodGet, base+next, "", "")
			var pg apiPage
			if err := json.Unmarshal(body, &pg); err != nil || status != 200 || ct != "application/json" || pg.Page != pages {
				t.Fatalf("%s: %d %q %v page %d", next, status, ct, err, pg.Page)
			}
			got = append(got, pg.Items...)
			next = ""
			if pg.Next != nil {
				next = *pg.Next
				if next != fixturesite.APIPagePath(pages+1) {
					t.Errorf("next of page %d: %q", pages, next)
				}
			}
		}
		want := s.APIItems()
		for i := range want {
			want[i].Related = nil
		}
		if pages != s.APIPages() || len(got) != n || !slices.EqualFunc(got, want, sameItem) {
			t.Errorf("%d items: %d pages (APIPages %d), got %v\nwant %v", n, pages, s.APIPages(), got, want)
		}
	}
}

func sameItem(a, b fixturesite.APIItem) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Price == b.Price && a.Currency == b.Currency &&
		a.InStock == b.InStock && a.Rating == b.Rating && a.Updated == b.Updated && slices.Equal(a.Tags, b.Tags) &&
		a.Image == b.Image && a.URL == b.URL && slices.Equal(a.Related, b.Related)
}

// TestAPIItemsMatchProducts: the API and the pages tell the same truth.
func TestAPIItemsMatchProducts(t *testing.T) {
	t.Parallel()
	s := fixturesite.New(fixturesite.Options{Pages: 2})
	ps, items := s.Products(), s.APIItems()
	if len(items) != len(ps) {
		t.Fatalf("%d items, %d products", len(items), len(ps))
	}
	for i, p := range ps {
		it := items[i]
		if it.ID != p.ID || it.Name != p.Name || it.Price != p.Price || it.Currency != p.Currency ||
			it.InStock != p.InStock || it.Rating != p.Rating || it.Updated != p.Updated.Format(time.RFC3339) ||
			!slices.Equal(it.Tags, p.Tags) || it.Image != p.Image || it.URL != fixturesite.ProductPath(p.ID) ||
			!slices.Equal(it.Related, p.Related) {
			t.Errorf("item %+v, product %+v", it, p)
		}
	}
}

// TestAPIItemPOST posts every ID, as a number and as a string, and gets its
// APIItem; following Related from ID 1 reaches every ID.
func TestAPIItemPOST(t *testing.T) {
	t.Parallel()
	s, base := start(t, fixturesite.Options{Pages: 2})
	items := s.APIItems()
	for _, it := range items {
		for _, body := range []string{`{"id": ` + strconv.Itoa(it.ID) + `}`, `{"id":"` + strconv.Itoa(it.ID) + `", "other": [1]}` + "\n"} {
			status, ct, b := do(t, http.MethodPost, base+fixturesite.APIItemPath, "application/json", body)
			var got fixturesite.APIItem
			if err := json.Unmarshal(b, &got); err != nil || status != 200 || ct != "application/json" || !sameItem(got, it) {
				t.Errorf("POST %s: %d %q %v: %s, want %+v", body, status, ct, err, b, it)
			}
		}
	}
	seen, queue := map[int]bool{1: true}, []int{1}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, r := range items[id-1].Related {
			if !seen[r] {
				seen[r] = true
				queue = append(queue, r)
			}
		}
	}
	if len(seen) != len(items) {
		t.Errorf("Related from ID 1 reaches %d of %d IDs", len(seen), len(items))
	}
	if u := s.Unexpected(); len(u) != 0 {
		t.Errorf("Unexpected: %q", u)
	}
}

// TestAPIBadRequests: each way a request can be wrong gets its status and a
// JSON error naming the problem, for every class of mistake: the page
// number, the method, the Content-Type, the body, the id.
func TestAPIBadRequests(t *testing.T) {
	t.Parallel()
	s, base := start(t, fixturesite.Options{Pages: 2})
	last := strconv.Itoa(s.APIPages())
	past := strconv.Itoa(s.APIPages() + 1)
	const jsonCT = "application/json"
	tests := []struct {
		name, method, path, ct, body string
		status                       int
		says                         string
	}{
		{"page zero", "GET", "/api/items?page=0", "", "", 400, "not a page number"},
		{"page leading zero", "GET", "/api/items?page=01", "", "", 400, "not a page number"},
		{"page negative", "GET", "/api/items?page=-1", "", "", 400, "not a page number"},
		{"page word", "GET", "/api/items?page=two", "", "", 400, "not a page number"},
		{"page empty", "GET", "/api/items?page=", "", "", 400, "not a page number"},
		{"page fraction", "GET", "/api/items?page=1.5", "", "", 400, "not a page number"},
		{"page twice", "GET", "/api/items?page=1&page=2", "", "", 400, "more than once"},
		{"bad escape", "GET", "/api/items?page=%zz", "", "", 400, "bad query"},
		{"page past the last", "GET", "/api/items?page=" + past, "", "", 404, "no page " + past},
		{"POST to the pages", "POST", "/api/items", jsonCT, `{"id": 1}`, 405, "use GET"},
		{"GET the item", "GET", "/api/item", "", "", 405, "use POST"},
		{"PUT the item", "PUT", "/api/item", jsonCT, `{"id": 1}`, 405, "use POST"},
		{"no Content-Type", "POST", "/api/item", "", `{"id": 1}`, 400, "missing Content-Type"},
		{"text/plain", "POST", "/api/item", "text/plain", `{"id": 1}`, 400, "send application/json"},
		{"form", "POST", "/api/item", "application/x-www-form-urlencoded", `id=1`, 400, "send application/json"},
		{"json suffix type", "POST", "/api/item", "application/json-patch+json", `{"id": 1}`, 400, "send application/json"},
		{"bad media type", "POST", "/api/item", "application/json; charset", `{"id": 1}`, 400, "send application/json"},
		{"latin-1 charset", "POST", "/api/item", "application/json; charset=iso-8859-1", `{"id": 1}`, 400, "send utf-8"},
		{"empty body", "POST", "/api/item", jsonCT, "", 400, "missing body"},
		{"blank body", "POST", "/api/item", jsonCT, " \n", 400, "missing body"},
		{"malformed", "POST", "/api/item", jsonCT, `{"id": 1`, 400, "not a JSON object"},
		{"array", "POST", "/api/item", jsonCT, `[{"id": 1}]`, 400, "not a JSON object"},
		{"null", "POST", "/api/item", jsonCT, `null`, 400, "not a JSON object"},
		{"number", "POST", "/api/item", jsonCT, `1`, 400, "not a JSON object"},
		{"two objects", "POST", "/api/item", jsonCT, `{"id": 1}{"id": 2}`, 400, "data after"},
		{"trailing garbage", "POST", "/api/item", jsonCT, `{"id": 1} x`, 400, "data after"},
		{"no id", "POST", "/api/item", jsonCT, `{"ID": 1}`, 400, `no "id"`},
		{"id null", "POST", "/api/item", jsonCT, `{"id": null}`, 400, "null"},
		{"id bool", "POST", "/api/item", jsonCT, `{"id": true}`, 400, "boolean"},
		{"id list", "POST", "/api/item", jsonCT, `{"id": [1]}`, 400, "list"},
		{"id object", "POST", "/api/item", jsonCT, `{"id": {"n": 1}}`, 400, "object"},
		{"id fraction", "POST", "/api/item", jsonCT, `{"id": 1.5}`, 400, "not an item ID"},
		{"id exponent", "POST", "/api/item", jsonCT, `{"id": 1e1}`, 400, "not an item ID"},
		{"id zero", "POST", "/api/item", jsonCT, `{"id": 0}`, 400, "not an item ID"},
		{"id negative", "POST", "/api/item", jsonCT, `{"id": -3}`, 400, "not an item ID"},
		{"id string padded", "POST", "/api/item", jsonCT, `{"id": " 3"}`, 400, "not an item ID"},
		{"id string word", "POST", "/api/item", jsonCT, `{"id": "three"}`, 400, "not an item ID"},
		{"id unknown", "POST", "/api/item", jsonCT, `{"id": ` + strconv.Itoa(len(s.Products())+1) + `}`, 404, "no item"},
		{"body too large", "POST", "/api/item", jsonCT, `{"id": 1, "pad": "` + strings.Repeat("x", 70000) + `"}`, 413, "body over"},
	}
	for _, tt := range tests {
		status, ct, body := do(t, tt.method, base+tt.path, tt.ct, tt.body)
		var e struct{ Error string }
		if err := json.Unmarshal(body, &e); err != nil || status != tt.status || ct != "application/json" || !strings.Contains(e.Error, tt.says) {
			t.Errorf("%s: %d %q %s, want %d saying %q", tt.name, status, ct, body, tt.status, tt.says)
		}
	}
	// What is right still works: the last page, any case of the media type.
	for _, ok := range []struct{ method, path, ct string }{
		{"GET", "/api/items?page=" + last, ""},
		{"HEAD", "/api/items", ""},
		{"POST", "/api/item", "Application/JSON; Charset=UTF-8"},
	} {
		if status, _, _ := do(t, ok.method, base+ok.path, ok.ct, `{"id": 2}`); status != 200 {
			t.Errorf("%s %s (%s): %d", ok.method, ok.path, ok.ct, status)
		}
	}
	// Unexpected names the API pages that do not exist, and nothing else.
	var bad []string
	for _, tt := range tests {
		if strings.HasPrefix(tt.path, fixturesite.APIItemsPath+"?") {
			bad = append(bad, tt.path)
		}
	}
	if u := s.Unexpected(); !slices.Equal(u, sorted(bad)) {
		t.Errorf("Unexpected: %q, want %q", u, sorted(bad))
	}
}
