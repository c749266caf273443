package login_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/cookies"
	"github.com/distscrape/distscrape/fetch/login"
	"github.com/distscrape/distscrape/test/fixturesite"
)

type bundle struct {
	site   *fixturesite.Site
	client *fetch.Client
	fatal  []error
	mu     sync.Mutex
}

func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{site: fixturesite.Start(t, fixturesite.Options{})}
	jar, err := cookies.New(cookies.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if b.client, err = fetch.New(fetch.Config{Jar: jar, Robots: false}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.client.Close)
	return b
}

func (b *bundle) session(t *testing.T, cfg login.Config) *login.Session {
	t.Helper()
	cfg.OnFatal = func(err error) { b.mu.Lock(); b.fatal = append(b.fatal, err); b.mu.Unlock() }
	if cfg.LoggedOut.RedirectTo == "" {
		cfg.LoggedOut = login.LoggedOut{Status: []int{401, 403}, RedirectTo: fixturesite.LoginPath, Selector: "form#login"}
	}
	s, err := login.New(b.client, b.client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (b *bundle) form() login.Config {
	base := b.site.URL()
	return login.Config{URL: base + fixturesite.LoginPath, TokenField: fixturesite.LoginTokenField,
		Fields: map[string]string{"user": fixturesite.LoginUser, "password": fixturesite.LoginPassword}}
}

func get(t *testing.T, f login.Fetcher, u string) (*fetch.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	return f.Fetch(ctx, req)
}

// TestFormLoginAndExpiry: a form login with its CSRF token opens the
// members pages; after the site ends every session, pages fetched at once
// fail retryably as logged out, one new login is made, and the pages are
// fetched after it; no page returned is the login page.
func TestFormLoginAndExpiry(t *testing.T) {
	b := setup(t)
	s := b.session(t, b.form())
	if err := s.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	page := func(i int) string { return b.site.URL() + fixturesite.MembersPath + itoa(i) }
	for i := 1; i <= 3; i++ {
		r, err := get(t, s, page(i))
		if err != nil || !strings.Contains(string(r.Body), fixturesite.MembersText+itoa(i)) {
			t.Fatalf("page %d: %v", i, err)
		}
	}
	b.site.ExpireSessions()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = get(t, s, page(i+1)) }()
	}
	wg.Wait()
	loggedOut := 0
	for i, err := range errs {
		var o fetch.Outcome
		switch {
		case err == nil: // fetched after another page's new login
		case errors.Is(err, login.ErrLoggedOut) && errors.As(err, &o) && !o.Final():
			loggedOut++
		default:
			t.Errorf("page %d: %v, want nil or a retryable ErrLoggedOut", i+1, err)
		}
	}
	if ok, _ := b.site.Logins(); loggedOut == 0 || ok != 2 || s.Logins() != 2 {
		t.Errorf("%d pages logged out, site saw %d logins, session %d; want ≥1, 2, 2", loggedOut, ok, s.Logins())
	}
	for i := 1; i <= 6; i++ {
		r, err := get(t, s, page(i))
		if err != nil || strings.Contains(string(r.Body), fixturesite.LoginFormMarker) {
			t.Fatalf("page %d after the new login: %v", i, err)
		}
	}
}

// TestLoginFails: wrong credentials, a missing token, a token field the
// form lacks, a login URL answering 404: one clear error wrapping
// ErrLoginFailed, OnFatal called once, every page after failing
// retryably, and the password in no message.
func TestLoginFails(t *testing.T) {
	cases := map[string]func(*login.Config){
		"wrong password": func(c *login.Config) {
			c.Fields = map[string]string{"user": fixturesite.LoginUser, "password": "hunter2-wrong"}
		},
		"no token":    func(c *login.Config) { c.TokenField = "" },
		"token field": func(c *login.Config) { c.TokenField = "authenticity_token" },
		"login 404":   func(c *login.Config) { c.URL += "/nope"; c.TokenField = "" },
	}
	for name, mod := range cases {
		t.Run(name, func(t *testing.T) {
			b := setup(t)
			cfg := b.form()
			mod(&cfg)
			s := b.session(t, cfg)
			err := s.Login(context.Background())
			if !errors.Is(err, login.ErrLoginFailed) {
				t.Fatalf("Login: %v, want ErrLoginFailed", err)
			}
			t.Log(err)
			if strings.Contains(err.Error(), "horse") || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("a password is in the error: %v", err)
			}
			_, perr := get(t, s, b.site.URL()+fixturesite.MembersPath+"1")
			var o fetch.Outcome
			if !errors.Is(perr, login.ErrLoginFailed) || !errors.As(perr, &o) || o.Final() {
				t.Errorf("page after a failed login: %v, want retryable ErrLoginFailed", perr)
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if len(b.fatal) != 1 {
				t.Errorf("OnFatal called %d times, want 1", len(b.fatal))
			}
			if ok, _ := b.site.Logins(); ok != 0 {
				t.Errorf("site accepted %d logins", ok)
			}
		})
	}
}

// TestLoggedOutSigns: each way a page can show the session is gone, alone.
func TestLoggedOutSigns(t *testing.T) {
	signs := map[string]login.LoggedOut{
		"redirect":     {RedirectTo: fixturesite.LoginPath},
		"redirect url": {RedirectTo: "http://HOST" + fixturesite.LoginPath},
		"selector":     {Selector: "form#login input[name=password]"},
	}
	for name, lo := range signs {
		t.Run(name, func(t *testing.T) {
			b := setup(t)
			cfg := b.form()
			lo.RedirectTo = strings.Replace(lo.RedirectTo, "HOST", strings.TrimPrefix(b.site.URL(), "http://"), 1)
			cfg.LoggedOut = lo
			s := b.session(t, cfg)
			_, err := get(t, s, b.site.URL()+fixturesite.MembersPath+"2")
			if !errors.Is(err, login.ErrLoggedOut) {
				t.Fatalf("members page without a session: %v, want ErrLoggedOut", err)
			}
			if r, err := get(t, s, b.site.URL()+fixturesite.MembersPath+"2"); err != nil || !strings.Contains(string(r.Body), fixturesite.MembersText) {
				t.Fatalf("after the login: %v", err)
			}
		})
	}
	b := setup(t)
	cfg := b.form()
	cfg.LoggedOut = login.LoggedOut{Status: []int{403}}
	s := b.session(t, cfg)
	if _, err := get(t, s, b.site.URL()+fixturesite.CookieNeedPath); !errors.Is(err, login.ErrLoggedOut) {
		t.Errorf("403 with status [403]: %v, want ErrLoggedOut", err)
	}
	if _, err := login.New(b.client, b.client, login.Config{URL: "x", LoggedOut: login.LoggedOut{Selector: "form[["}}); err == nil {
		t.Error("a bad selector is accepted")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestLoginUnreachable: a login URL that refuses connections is no
// refused login: Login wraps ErrUnreachable and not ErrLoginFailed,
// OnFatal is not called, and a page asks for the login again first,
// failing retryably while it cannot be made.
func TestLoginUnreachable(t *testing.T) {
	b := setup(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + fixturesite.LoginPath
	ln.Close()
	cfg := b.form()
	cfg.URL, cfg.TokenField = closed, ""
	s := b.session(t, cfg)
	err = s.Login(context.Background())
	if !errors.Is(err, login.ErrUnreachable) || errors.Is(err, login.ErrLoginFailed) {
		t.Fatalf("Login: %v, want ErrUnreachable only", err)
	}
	_, perr := get(t, s, b.site.URL()+fixturesite.MembersPath+"1")
	var o fetch.Outcome
	if !errors.Is(perr, login.ErrUnreachable) || !errors.As(perr, &o) || o.Final() {
		t.Errorf("page while the login cannot be made: %v, want a retryable ErrUnreachable", perr)
	}
	if b.site.Requests(fixturesite.MembersPath+"1") > 0 {
		t.Error("the page was fetched without a login")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.fatal) != 0 {
		t.Errorf("OnFatal called %d times, want 0", len(b.fatal))
	}
}
