// Package login keeps a crawl logged in: Session is a manager.Fetcher
// that logs in before the first page, tells a page fetched while logged
// out (a status, a redirect to the login page, a selector present), logs
// in again, and fails that page retryably so it is fetched again after
// the login — never saved as content.
//
// A login is a form POST through the worker's client (its cookie jar
// keeps the session), optionally after a GET of the form for a CSRF
// token, or steps in a browser (fetch/render). A login the site refuses
// is fatal for the worker: Session calls Config.OnFatal once and fails
// every page after, retryably, so the worker stops instead of saving login
// pages. A login that cannot reach the site (a retryable fetch failure:
// connection refused, a timeout, a 5xx) is not: each page asks for a
// login before it is fetched and fails retryably while the site is down,
// so the items back off like any fetch failure. No error or log line
// carries a field's value or a cookie.
package login

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/PuerkitoBio/goquery"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/render"
)

// Sentinel errors.
var (
	// ErrLoggedOut is wrapped in the retryable error of a page fetched
	// while logged out.
	ErrLoggedOut = errors.New("login: logged out")
	// ErrLoginFailed is wrapped in the error of a login that failed, and
	// of every page after it.
	ErrLoginFailed = errors.New("login failed")
	// ErrUnreachable is wrapped in the error of a login that could not
	// reach the site; it is not fatal and the pages waiting on it retry.
	ErrUnreachable = errors.New("login: site unreachable")
)

// Fetcher is the plain client's method (fetch.Client, manager.Fetcher).
type Fetcher interface {
	Fetch(ctx context.Context, req *http.Request) (*fetch.Response, error)
}

// Config says how to log in and how to tell a session is gone.
type Config struct {
	// Form login: a POST of Fields (url-encoded) to URL. With TokenField,
	// FormURL (default URL) is fetched first and the value of its input
	// named TokenField is posted along.
	URL        string
	Fields     map[string]string
	FormURL    string
	TokenField string
	// Browser login, instead of a form: Steps run on PageURL by Renderer.
	PageURL  string
	Steps    []render.Step
	Renderer render.Renderer
	// LoggedOut says how a page shows the session is gone.
	LoggedOut LoggedOut
	// OnFatal is called once, with the error, when a login fails.
	OnFatal func(error)
	Logger  *slog.Logger // default slog.Default()
}

// LoggedOut tells a page fetched without a session; any one that matches.
type LoggedOut struct {
	Status     []int  // statuses the site answers without a session (401, 403)
	RedirectTo string // the page a request is redirected to (a path, or a URL): "/login"
	Selector   string // a CSS selector present only when logged out: "form#login"
}

// Session logs in and fetches through Next.
type Session struct {
	next   Fetcher
	client Fetcher
	cfg    Config
	redir  *url.URL

	mu     sync.Mutex // held while logging in: pages wait for the session
	gen    uint64     // logins done; a page's gen says which session it used
	failed error
	// unreached: the last login could not reach the site; the next page
	// logs in first.
	unreached bool
	logins    atomic.Int64
	fatalMu   sync.Once
}

// New returns a Session fetching pages through next and logging in through
// client (the worker's fetch.Client: its jar keeps the session).
func New(next, client Fetcher, cfg Config) (*Session, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Session{next: next, client: client, cfg: cfg}
	switch {
	case cfg.URL == "" && len(cfg.Steps) == 0:
		return nil, errors.New("login: neither a form URL nor browser steps")
	case len(cfg.Steps) > 0 && (cfg.Renderer == nil || cfg.PageURL == ""):
		return nil, errors.New("login: browser steps need a renderer and a page URL")
	}
	if r := cfg.LoggedOut.RedirectTo; r != "" {
		u, err := url.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("login: logged_out.redirect_to %q: %w", r, err)
		}
		s.redir = u
	}
	if sel := cfg.LoggedOut.Selector; sel != "" {
		if _, err := compile(sel); err != nil {
			return nil, fmt.Errorf("login: logged_out.selector %q: %w", sel, err)
		}
	}
	return s, nil
}

// Logins is how many logins succeeded.
func (s *Session) Logins() int64 { return s.logins.Load() }

// Login logs in now (a worker does before its first checkout). Its error
// wraps ErrLoginFailed and is fatal (OnFatal has been called), or wraps
// ErrUnreachable: the site could not be reached, and the first page
// fetched tries again.
func (s *Session) Login(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loginLocked(ctx)
}

// Fetch fetches req; a page that shows the session is gone triggers a new
// login and fails retryably (ErrLoggedOut).
func (s *Session) Fetch(ctx context.Context, req *http.Request) (*fetch.Response, error) {
	s.mu.Lock()
	gen, failed, unreached := s.gen, s.failed, s.unreached
	s.mu.Unlock()
	if failed != nil {
		return nil, fetch.Retry("login failed", 0, failed)
	}
	if unreached {
		// The last login could not reach the site: log in before the page.
		if err := s.relogin(ctx, gen); err != nil {
			reason := "login failed"
			if errors.Is(err, ErrUnreachable) {
				reason = "login unreachable"
			}
			return nil, fetch.Retry(reason, 0, err)
		}
		s.mu.Lock()
		gen = s.gen
		s.mu.Unlock()
	}
	resp, err := s.next.Fetch(ctx, req)
	why := s.loggedOut(req, resp, err)
	if why == "" {
		return resp, err
	}
	if ctx.Err() != nil {
		return nil, fetch.Retry("canceled", 0, ctx.Err())
	}
	if lerr := s.relogin(ctx, gen); lerr != nil {
		return nil, fetch.Retry("login failed", 0, lerr)
	}
	s.cfg.Logger.Info("page fetched while logged out; logged in again, the page will be retried", "url", req.URL.Redacted(), "why", why)
	return nil, fetch.Retry("logged out", 0, fmt.Errorf("%w: %s; retried after logging in again", ErrLoggedOut, why))
}

// relogin logs in again unless another page already did since gen.
func (s *Session) relogin(ctx context.Context, gen uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	if s.gen != gen {
		return nil
	}
	return s.loginLocked(ctx)
}

func (s *Session) loginLocked(ctx context.Context) error {
	ctx = fetch.WithPatience(ctx) // no item to hand back: wait for the host
	var err error
	if len(s.cfg.Steps) > 0 {
		err = s.browserLogin(ctx)
	} else {
		err = s.formLogin(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrLoginFailed, ctx.Err()) // a stop, not the site's refusal
		}
		if unreachable(err) {
			s.unreached = true
			s.cfg.Logger.Warn("login: the site could not be reached; pages wait and retry", "err", err)
			return fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
		s.failed = fmt.Errorf("%w: %w", ErrLoginFailed, err)
		s.fatalMu.Do(func() {
			if s.cfg.OnFatal != nil {
				s.cfg.OnFatal(s.failed)
			}
		})
		return s.failed
	}
	s.gen++
	s.unreached = false
	s.logins.Add(1)
	s.cfg.Logger.Info("logged in", "login", s.logins.Load())
	return nil
}

// unreachable reports whether a login's error is a fetch failure worth
// retrying (the network, a timeout, a 5xx, robots.txt unreachable), not the
// site's answer to the credentials.
func unreachable(err error) bool {
	var o fetch.Outcome
	return errors.As(err, &o) && !o.Final()
}

// formLogin posts the form, with the CSRF token picked up first.
func (s *Session) formLogin(ctx context.Context) error {
	form := url.Values{}
	for k, v := range s.cfg.Fields {
		form.Set(k, v)
	}
	if s.cfg.TokenField != "" {
		page := s.cfg.FormURL
		if page == "" {
			page = s.cfg.URL
		}
		resp, err := s.get(ctx, page)
		if err != nil {
			return fmt.Errorf("GET the login form: %w", err)
		}
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(resp.Body))
		if err != nil {
			return fmt.Errorf("the login form %s: %w", resp.URL.Redacted(), err)
		}
		in := doc.Find("input").FilterFunction(func(_ int, e *goquery.Selection) bool {
			n, _ := e.Attr("name")
			return n == s.cfg.TokenField
		}).First()
		tok, ok := in.Attr("value")
		if !ok {
			return fmt.Errorf("the login form %s has no input named %q with a value", resp.URL.Redacted(), s.cfg.TokenField)
		}
		form.Set(s.cfg.TokenField, tok)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("login.url: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.client.Fetch(ctx, req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", req.URL.Redacted(), err)
	}
	if why := s.loggedOut(req, resp, nil); why != "" {
		return fmt.Errorf("POST %s: the site still shows a logged-out page (%s): wrong credentials or fields?", req.URL.Redacted(), why)
	}
	return nil
}

// browserLogin runs the steps on the login page in a tab.
func (s *Session) browserLogin(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.PageURL, nil)
	if err != nil {
		return fmt.Errorf("login.page: %w", err)
	}
	p, err := s.cfg.Renderer.Render(ctx, req, render.Rule{Steps: s.cfg.Steps})
	if err != nil {
		return fmt.Errorf("browser login at %s: %w", req.URL.Redacted(), err)
	}
	// A submit the site answered with an error status was not followed:
	// the tab still shows the form as filled in, which may carry no
	// logged-out sign, so the answer itself decides.
	for _, n := range p.Navigations {
		if n.Followed || n.Status < 400 {
			continue
		}
		err := fmt.Errorf("browser login at %s: the site refused the submit: %s %s answered %d", req.URL.Redacted(), n.Method, n.URL, n.Status)
		if n.Status >= 500 || n.Status == http.StatusTooManyRequests {
			return fetch.Retry("login", 0, err)
		}
		return err
	}
	if why := s.loggedOut(req, p.Response, nil); why != "" {
		return fmt.Errorf("browser login at %s: the page still shows a logged-out page (%s)", req.URL.Redacted(), why)
	}
	return nil
}

func (s *Session) get(ctx context.Context, raw string) (*fetch.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, err
	}
	return s.client.Fetch(ctx, req)
}

// loggedOut says why a page's answer shows the session is gone; "" when
// it does not. A request for the login page itself is not judged by the
// redirect.
func (s *Session) loggedOut(req *http.Request, resp *fetch.Response, err error) string {
	lo := s.cfg.LoggedOut
	var fe *fetch.Error
	if err != nil {
		if !errors.As(err, &fe) {
			return ""
		}
		if slices.Contains(lo.Status, fe.Status) {
			return fmt.Sprintf("status %d", fe.Status)
		}
		// A login page outside the crawl's scope: the redirect to it is
		// refused, and says where it went.
		if u, perr := url.Parse(fe.URL); perr == nil && s.redir != nil && errors.Is(err, fetch.ErrOutOfScope) &&
			s.isLoginPage(u) && !s.isLoginPage(req.URL) {
			return "redirected to " + s.redir.Path
		}
		return ""
	}
	if resp == nil {
		return ""
	}
	if slices.Contains(lo.Status, resp.Status) {
		return fmt.Sprintf("status %d", resp.Status)
	}
	if s.redir != nil && s.isLoginPage(resp.URL) && !s.isLoginPage(req.URL) {
		return "redirected to " + s.redir.Path
	}
	if lo.Selector != "" && isHTML(resp.ContentType) {
		if doc, err := goquery.NewDocumentFromReader(bytes.NewReader(resp.Body)); err == nil && doc.FindMatcher(goquery.Single(lo.Selector)).Length() > 0 {
			return fmt.Sprintf("the page has %s", lo.Selector)
		}
	}
	return ""
}

// isLoginPage reports whether u is RedirectTo: its path, and its host when
// RedirectTo names one.
func (s *Session) isLoginPage(u *url.URL) bool {
	if u == nil {
		return false
	}
	if s.redir.Host != "" && !strings.EqualFold(s.redir.Host, u.Host) {
		return false
	}
	return strings.TrimSuffix(u.Path, "/") == strings.TrimSuffix(s.redir.Path, "/")
}

// captureTaker is what render.Router offers (manager.CaptureTaker): a
// Session passes a page's copies through.
type captureTaker interface {
	TakeCaptures(resp *fetch.Response) []render.Capture
}

// TakeCaptures returns the copies Next made of resp, if it makes any.
func (s *Session) TakeCaptures(resp *fetch.Response) []render.Capture {
	if ct, ok := s.next.(captureTaker); ok {
		return ct.TakeCaptures(resp)
	}
	return nil
}

func isHTML(ct string) bool { return ct == "text/html" || ct == "application/xhtml+xml" }
