package e2e

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/recorder"
	"github.com/distscrape/distscrape/test/testbin"
)

// hostileIDs are IDs a hostile API could hand an ID crawl: each must reach
// the server as one value, whatever the body's encoding.
var hostileIDs = []string{"5&role=admin", "7=8", "a+b%20c", "100%", `q"uote\back`, "<r>&amp;</r>", "'x'&\"y\"", "café", "{id}", "#frag", "a;b"}

// TestRequestBodyEscapesPlaceholders: an ID crawl POSTs each hostile ID
// in a form body (Content-Type given or not), a JSON body, an XML body and
// a text/plain one; the server parses each body and finds the ID as one
// value and the template's other fields as they were (no role=admin).
func TestRequestBodyEscapesPlaceholders(t *testing.T) {
	type got struct{ ct, body string }
	var mu sync.Mutex
	var bodies []got
	srv := recorder.Start(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/api" { // not robots.txt
			mu.Lock()
			bodies = append(bodies, got{r.Header.Get("Content-Type"), string(b)})
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>ok</p>")
	})
	cases := []struct {
		name, headers, body, wantCT string
		parse                       func(string) (parsed, error)
	}{
		{"form", "{Content-Type: application/x-www-form-urlencoded}", "id={id}&role=user", "application/x-www-form-urlencoded", parseForm},
		{"form by default", "{}", "id={id}&role=user", "application/x-www-form-urlencoded", parseForm},
		{"json", "{Content-Type: application/json}", `{"id": "{id}", "role": "user"}`, "application/json", func(s string) (parsed, error) {
			var v struct{ ID, Role string }
			err := json.Unmarshal([]byte(s), &v)
			return parsed{v.ID, v.Role}, err
		}},
		{"json by default", "{}", `{"id": "{id}", "role": "user"}`, "application/json", func(s string) (parsed, error) {
			var v struct{ ID, Role string }
			err := json.Unmarshal([]byte(s), &v)
			return parsed{v.ID, v.Role}, err
		}},
		{"xml", "{Content-Type: application/xml}", "<q><id>{id}</id><role>user</role></q>", "application/xml", func(s string) (parsed, error) {
			var v struct {
				ID   string `xml:"id"`
				Role string `xml:"role"`
			}
			err := xml.Unmarshal([]byte(s), &v)
			return parsed{v.ID, v.Role}, err
		}},
		{"text", "{Content-Type: text/plain}", "role user\nid {id}", "text/plain", func(s string) (parsed, error) {
			role, id, ok := strings.Cut(s, "\nid ")
			if !ok {
				return parsed{}, fmt.Errorf("no id line")
			}
			return parsed{id, strings.TrimPrefix(role, "role ")}, nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			bodies = nil
			mu.Unlock()
			var seeds []string
			for _, id := range hostileIDs {
				seeds = append(seeds, fmt.Sprintf("%q", id))
			}
			dir := t.TempDir()
			cfg := writeYAML(t, dir, "crawl: ids", "tracker: {kind: memory, max_attempts: 1}",
				fmt.Sprintf("scraper:\n  kind: id\n  seeds: [%s]\n  id_regex: 'never(\\d+)'\n  download_url_fmt: %q\n  requests: [{method: POST, headers: %s, body: %q}]",
					strings.Join(seeds, ", "), srv.URL+"/api?id={id}", tc.headers, tc.body),
				"saver: {kind: none}")
			if r := (testbin.Cmd{Dir: dir}).Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress"); r.Code != 0 {
				t.Fatalf("crawl: %s", r)
			}
			mu.Lock()
			defer mu.Unlock()
			var ids []string
			for _, b := range bodies {
				if !strings.HasPrefix(b.ct, tc.wantCT) {
					t.Errorf("Content-Type %q, want %s", b.ct, tc.wantCT)
				}
				p, err := tc.parse(b.body)
				if err != nil || p.role != "user" {
					t.Errorf("body %q: %+v, %v: want the role user and one id", b.body, p, err)
				}
				ids = append(ids, p.id)
			}
			slices.Sort(ids)
			want := slices.Sorted(slices.Values(hostileIDs))
			if !slices.Equal(ids, want) {
				t.Errorf("the server read the IDs %q, want %q", ids, want)
			}
		})
	}
}

// parsed is what the server read of a body.
type parsed struct{ id, role string }

func parseForm(s string) (parsed, error) {
	v, err := url.ParseQuery(s)
	if err != nil {
		return parsed{}, err
	}
	if len(v["id"]) != 1 || len(v["role"]) != 1 || len(v) != 2 {
		return parsed{}, fmt.Errorf("fields %q: want one id and one role", v)
	}
	return parsed{v.Get("id"), v.Get("role")}, nil
}
