package webdavsaver_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
	"github.com/distscrape/distscrape/saver/webdavsaver"
)

// withDefaults sets the zero keys of s to their default tags, as the
// config does before it validates a section.
func withDefaults(t *testing.T, s *webdavsaver.Section) *webdavsaver.Section {
	t.Helper()
	v := reflect.ValueOf(s).Elem()
	for i := 0; i < v.NumField(); i++ {
		def, ok := v.Type().Field(i).Tag.Lookup("default")
		f := v.Field(i)
		if !ok || !f.IsZero() {
			continue
		}
		switch f.Interface().(type) {
		case string:
			f.SetString(def)
		case time.Duration:
			d, err := time.ParseDuration(def)
			if err != nil {
				t.Fatalf("default %q: %v", def, err)
			}
			f.SetInt(int64(d))
		case int:
			n, err := strconv.Atoi(def)
			if err != nil {
				t.Fatalf("default %q: %v", def, err)
			}
			f.SetInt(int64(n))
		default:
			t.Fatalf("no default for a %s", f.Type())
		}
	}
	return s
}

func TestValidate(t *testing.T) {
	const secret = "pa55/w@rd"
	cases := []struct {
		name string
		sec  webdavsaver.Section
		want map[string]string // key: a part of its problem
	}{
		{"defaults", webdavsaver.Section{URL: "https://cloud.example/remote.php/dav/files/me/crawls/"}, nil},
		{"http with a password", webdavsaver.Section{URL: "http://me:secret@127.0.0.1:8080/dav"}, nil},
		{"no url", webdavsaver.Section{}, map[string]string{"url": "required"}},
		{"not absolute", webdavsaver.Section{URL: "cloud.example/dav"}, map[string]string{"url": "not an absolute URL"}},
		{"scheme", webdavsaver.Section{URL: "ftp://cloud.example/dav"}, map[string]string{"url": `scheme "ftp" not allowed`}},
		{"no host", webdavsaver.Section{URL: "https:///dav"}, map[string]string{"url": "no host"}},
		{"bad port", webdavsaver.Section{URL: "https://cloud.example:99999/dav"}, map[string]string{"url": "invalid port"}},
		{"query", webdavsaver.Section{URL: "https://cloud.example/dav?user=me"}, map[string]string{"url": "no query"}},
		{"fragment", webdavsaver.Section{URL: "https://cloud.example/dav#top"}, map[string]string{"url": "no query or fragment"}},
		{"unescaped password", webdavsaver.Section{URL: "https://me:" + secret + "@cloud.example/dav"}, map[string]string{"url": "invalid URL"}},
		{"name not unique", webdavsaver.Section{URL: "https://h/", Name: "{crawl}/{host}"}, map[string]string{"name": "must contain {id}, {sha256} or {path}"}},
		{"name placeholder", webdavsaver.Section{URL: "https://h/", Name: "{crawl}/{nope}"}, map[string]string{"name": "unknown placeholder {nope}"}},
		{"name braces", webdavsaver.Section{URL: "https://h/", Name: "{crawl}/{id"}, map[string]string{"name": "unclosed {"}},
		{"timeout short", webdavsaver.Section{URL: "https://h/", Timeout: 500 * time.Millisecond}, map[string]string{"timeout": "out of range"}},
		{"timeout long", webdavsaver.Section{URL: "https://h/", Timeout: 2 * time.Hour}, map[string]string{"timeout": "out of range"}},
		{"concurrency high", webdavsaver.Section{URL: "https://h/", Concurrency: 257}, map[string]string{"concurrency": "out of range (1 to 256)"}},
		{"concurrency negative", webdavsaver.Section{URL: "https://h/", Concurrency: -1}, map[string]string{"concurrency": "out of range"}},
		{"every key", webdavsaver.Section{URL: "gopher://h", Name: "x", Timeout: time.Nanosecond, Concurrency: 1000},
			map[string]string{"url": "scheme", "name": "must contain", "timeout": "out of range", "concurrency": "out of range"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p driver.Problems
			withDefaults(t, &c.sec).Validate(&p, saver.Env{Crawl: "c", Worker: "check"})
			got := map[string]string{}
			for _, ke := range p.List() {
				got[ke.Key] += ke.Msg + "; "
				if strings.Contains(ke.Msg, secret) || strings.Contains(ke.Msg, "secret") {
					t.Errorf("%s: the message prints the password: %s", ke.Key, ke.Msg)
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("problems %q, want ones for %q", got, c.want)
			}
			for key, part := range c.want {
				if !strings.Contains(got[key], part) {
					t.Errorf("%s: %q, want a problem saying %q", key, got[key], part)
				}
			}
		})
	}
}

// The section as the config hands it over (its default tags applied)
// opens a saver that stores pages under the URL, and says where without
// the user information.
func TestSectionOpen(t *testing.T) {
	t.Parallel()
	const user, pass = "crawler", "open-s3cret"
	d := startDAV(t, basicAuth(user, pass))
	sec := withDefaults(t, &webdavsaver.Section{URL: authURL(t, d.URL+"/crawls", user, pass)})
	if sec.Name != webdavsaver.DefaultName || sec.Timeout != webdavsaver.DefaultTimeout || sec.Concurrency != webdavsaver.DefaultConcurrency {
		t.Fatalf("defaults %+v differ from the package's", sec)
	}
	env := saver.Env{Crawl: "c1", Worker: "w1"}
	var p driver.Problems
	sec.Validate(&p, env)
	if len(p.List()) > 0 {
		t.Fatalf("problems: %v", p.List())
	}
	if loc, want := sec.Location(env), "WebDAV "+d.URL+"/crawls/c1/{host}/{sha256}"; loc != want {
		t.Fatalf("Location = %q, want %q", loc, want)
	}
	s, err := sec.Open(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	page := savertest.NewPage("http://example.test/", []byte("home"))
	saveAll(t, s, page)
	got := diskReader{root: filepath.Join(d.Dir, "crawls")}.all(t)
	if len(got) != 1 || got[0].Key != page.Key || string(got[0].Body) != "home" {
		t.Fatalf("stored %+v", got)
	}
}
