package redissink_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/internal/redact"
	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/record/recordtest"
	"github.com/distscrape/distscrape/record/redissink"
)

func TestRegistered(t *testing.T) {
	d, ok := record.Lookup("redis")
	if !ok {
		t.Fatal("records.kind redis is not registered")
	}
	if _, ok := d.New().(*redissink.Section); !ok || d.Tables {
		t.Fatalf("driver %+v: want a *Section and no tables", d)
	}
	if _, ok := d.New().(record.Checker); !ok {
		t.Fatal("the section is no record.Checker")
	}
}

// TestValidate: each class of bad section names its key and never repeats
// the URL's password; good sections have no problem.
func TestValidate(t *testing.T) {
	const pw = "pw-secret-0123"
	good := redissink.Section{URL: "redis://:" + pw + "@127.0.0.1:6379/2", Key: redissink.DefaultKey}
	cases := []struct {
		name, key, want string
		change          func(s *redissink.Section)
	}{
		{"no url", "url", "required", func(s *redissink.Section) { s.URL = "" }},
		{"not a URL", "url", "not an absolute URL", func(s *redissink.Section) { s.URL = "127.0.0.1:6379" }},
		{"other scheme", "url", "scheme", func(s *redissink.Section) { s.URL = "http://:" + pw + "@h:6379/0" }},
		{"no host", "url", "no host", func(s *redissink.Section) { s.URL = "redis://:" + pw + "@:6379/0" }},
		{"bad port", "url", "port", func(s *redissink.Section) { s.URL = "redis://:" + pw + "@h:99999/0" }},
		{"database not a number", "url", "database", func(s *redissink.Section) { s.URL = "redis://:" + pw + "@h:6379/x" }},
		{"password with a slash", "url", "user information", func(s *redissink.Section) { s.URL = "redis://:a/" + pw + "@h:6379/0" }},
		{"cluster database", "url", "Cluster", func(s *redissink.Section) { s.URL = "redis://:" + pw + "@h:7000/3?addr=h2:7001" }},
		{"cluster bad node", "url", "addr=", func(s *redissink.Section) { s.URL = "redis://:" + pw + "@h:7000?addr=h2" }},
		{"empty key", "key", "empty", func(s *redissink.Section) { s.Key = "" }},
		{"space in key", "key", "white space", func(s *redissink.Section) { s.Key = "{crawl}: records" }},
		{"control in key", "key", "control", func(s *redissink.Section) { s.Key = "{crawl}:\x01" }},
		{"no {crawl}", "key", "{crawl} once", func(s *redissink.Section) { s.Key = "records" }},
		{"{crawl} twice", "key", "{crawl} once", func(s *redissink.Section) { s.Key = "{crawl}:{crawl}" }},
		{"another tag first", "key", "brace", func(s *redissink.Section) { s.Key = "{x}:{crawl}" }},
		{"a lone brace", "key", "brace", func(s *redissink.Section) { s.Key = "a}{crawl}" }},
		{"crawl unbraced", "key", "{crawl} once", func(s *redissink.Section) { s.Key = "crawl:records" }},
	}
	for _, tc := range cases {
		s := good
		tc.change(&s)
		var p driver.Problems
		s.Validate(&p)
		list := p.List()
		if len(list) != 1 || list[0].Key != tc.key || !strings.Contains(list[0].Msg, tc.want) {
			t.Errorf("%s: problems %v, want one at %s saying %q", tc.name, list, tc.key, tc.want)
		}
		for _, e := range list {
			if strings.Contains(e.Error(), pw) {
				t.Errorf("%s: the problem shows the password: %v", tc.name, e)
			}
		}
	}
	for _, s := range []redissink.Section{good,
		{URL: "rediss://user:" + pw + "@redis.example:6380/0", Key: "shop:{crawl}:records"},
		{URL: "redis://h1:7000?addr=h2:7001&addr=h3:7002", Key: "{crawl}"},
		{URL: "redis://127.0.0.1", Key: "a.b-c_d/{crawl}:x"},
	} {
		var p driver.Problems
		s.Validate(&p)
		if len(p.List()) != 0 {
			t.Errorf("%+v: problems %v, want none", s, p.List())
		}
	}
}

func TestLocation(t *testing.T) {
	s := redissink.Section{URL: "redis://u:pw-secret-0123@h:6379/2", Key: "shop:{crawl}:records"}
	if got, want := s.Location(redact.URL), "Redis redis://xxxxx@h:6379/2 keys shop:{crawl}:records:*"; got != want {
		t.Fatalf("Location %q, want %q", got, want)
	}
}

// TestCheck: check reaches the server and writes nothing; a server gone
// is ErrUnavailable, a bad key template is refused before connecting.
func TestCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Options{})
	s := redissink.Section{URL: srv.URL(0), Key: redissink.DefaultKey}
	if err := s.Check(ctx, recordtest.Crawl); err != nil {
		t.Fatal(err)
	}
	if n, err := srv.Client(t).DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("check left %d keys, %v", n, err)
	}
	if err := (&redissink.Section{URL: s.URL, Key: "records"}).Check(ctx, recordtest.Crawl); err == nil {
		t.Fatal("check with a key without {crawl}: no error")
	}
	if err := s.Check(ctx, "a{b}"); err == nil {
		t.Fatal("check of a crawl name with braces: no error")
	}
	srv.Kill()
	if err := s.Check(ctx, recordtest.Crawl); !errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("check with the server gone: %v, want ErrUnavailable", err)
	}
}
