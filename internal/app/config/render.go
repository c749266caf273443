package config

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/cascadia"

	"github.com/distscrape/distscrape/fetch/render"
)

// RenderRule is one fetch.render entry: the items whose key matches are
// rendered in headless Chromium (fetch/render); the first match decides.
type RenderRule struct {
	Match string `yaml:"match"` // required: a regex of the item keys
	// WaitFor is a CSS selector to wait for, or "network idle"; "" takes
	// the page at its load event.
	WaitFor string        `yaml:"wait_for"`
	Timeout time.Duration `yaml:"timeout"` // the page's, after its fetch; default 30s
	Scroll  int           `yaml:"scroll"`  // times scrolled to the end (lazy lists); 0: none
}

// Login is `login:`: how a worker gets a session, and how it tells one
// is gone. Either a form (URL, Fields) or browser steps (Page, Steps).
type Login struct {
	URL        string            `yaml:"url"`         // form: the POST target
	Fields     map[string]string `yaml:"fields"`      // form: posted url-encoded; write secrets as ${VAR}
	FormURL    string            `yaml:"form_url"`    // form: fetched first for TokenField; default URL
	TokenField string            `yaml:"token_field"` // form: the input whose value (a CSRF token) is posted along
	Page       string            `yaml:"page"`        // browser: the page the steps run on
	Steps      []LoginStep       `yaml:"steps"`       // browser: in order
	LoggedOut  LoggedOut         `yaml:"logged_out"`  // required: at least one sign
}

// LoginStep is one browser step: exactly one of Fill (with Value), Click
// or Wait, each a CSS selector.
type LoginStep struct {
	Fill  string `yaml:"fill"`
	Value string `yaml:"value"`
	Click string `yaml:"click"`
	Wait  string `yaml:"wait"`
}

// LoggedOut says how a page shows the session is gone; any sign that
// matches.
type LoggedOut struct {
	Status     []int  `yaml:"status"`      // e.g. [401, 403]
	RedirectTo string `yaml:"redirect_to"` // a path ("/login") or a URL the site redirects to
	Selector   string `yaml:"selector"`    // present only on a logged-out page: "form#login"
}

// idleSpelling is "network idle" written another way, which CSS would
// take for an element's name and wait for until the timeout.
var idleSpelling = regexp.MustCompile(`(?i)^network[-_ ]*idle$|^networkidle[0-9]?$|^idle$`)

// Render limits.
const (
	DefaultRenderConcurrency = 2
	MaxRenderConcurrency     = 64
	MaxScroll                = 1000
)

// CookiesOn reports whether the crawl keeps a cookie jar (fetch.cookies,
// default true).
func (f *Fetch) CookiesOn() bool { return f.Cookies == nil || *f.Cookies }

// RenderKinds is saver.capture as fetch/render takes it.
func (c *Config) RenderKinds() []render.Kind {
	var out []render.Kind
	for _, k := range c.Saver.Capture {
		if kind, err := render.ParseKind(k); err == nil {
			out = append(out, kind)
		}
	}
	return out
}

// RenderSteps is the browser steps as fetch/render takes them.
func (l *Login) RenderSteps() []render.Step {
	var out []render.Step
	for _, s := range l.Steps {
		switch {
		case s.Fill != "":
			out = append(out, render.Step{Action: render.StepFill, Selector: s.Fill, Value: s.Value})
		case s.Click != "":
			out = append(out, render.Step{Action: render.StepClick, Selector: s.Click})
		default:
			out = append(out, render.Step{Action: render.StepWait, Selector: s.Wait})
		}
	}
	return out
}

func (c *Config) validateRender(p *problems) {
	f := &c.Fetch
	for i, r := range f.Render {
		path := "fetch.render[" + strconv.Itoa(i) + "]"
		if r.Match == "" {
			p.add(path+".match", "required: a regex of the item keys to render")
		}
		checkRegex(p, path+".match", r.Match)
		switch w := strings.TrimSpace(r.WaitFor); {
		case w == "" || w == render.NetworkIdle:
		case idleSpelling.MatchString(w):
			p.add(path+".wait_for", "%s: did you mean \"network idle\"? (as written it waits for an element of that name)", quote(w))
		default:
			checkCSS(p, path+".wait_for", w, ` (or "network idle")`)
		}
		if r.Timeout != 0 {
			durRange(p, path+".timeout", r.Timeout, 100*time.Millisecond, 10*time.Minute)
		}
		intRange(p, path+".scroll", r.Scroll, 0, MaxScroll)
	}
	if f.RenderConcurrency != 0 {
		intRange(p, "fetch.render_concurrency", f.RenderConcurrency, 1, MaxRenderConcurrency)
	}
	if strings.ContainsFunc(f.RenderBrowser, isControl) {
		p.add("fetch.render_browser", "contains a control character")
	}
	seen := map[render.Kind]bool{}
	for i, k := range c.Saver.Capture {
		path := "saver.capture[" + strconv.Itoa(i) + "]"
		kind, err := render.ParseKind(k)
		switch {
		case err != nil:
			p.add(path, "unknown copy %s (want pdf or screenshot)", quote(k))
		case seen[kind]:
			p.add(path, "%s listed twice", quote(k))
		}
		seen[kind] = true
	}
	if len(c.Saver.Capture) > 0 && len(f.Render) == 0 {
		p.add("saver.capture", "copies are made of rendered pages: add fetch.render rules (match: ...) for the pages to copy")
	}
	if f.CookiesFile != "" && !f.CookiesOn() {
		p.add("fetch.cookies_file", "needs fetch.cookies: true (the default): cookies are off")
	}
	if strings.ContainsFunc(f.CookiesFile, isControl) {
		p.add("fetch.cookies_file", "contains a control character")
	}
	for i, a := range f.UserAgents {
		if strings.TrimSpace(a) == "" || strings.ContainsFunc(a, isControl) {
			p.add("fetch.user_agents["+strconv.Itoa(i)+"]", "empty or holds a control character")
		}
	}
	if f.UserAgentMode != "" {
		oneOf(p, "fetch.user_agent_mode", f.UserAgentMode, "rotate", "sticky")
	}
	if c.Login.Set() {
		c.validateLogin(p)
	}
}

// Set reports whether login: says anything.
func (l *Login) Set() bool {
	return l.URL != "" || len(l.Fields) > 0 || l.FormURL != "" || l.TokenField != "" || l.Page != "" || len(l.Steps) > 0 ||
		len(l.LoggedOut.Status) > 0 || l.LoggedOut.RedirectTo != "" || l.LoggedOut.Selector != ""
}

func (c *Config) validateLogin(p *problems) {
	l := &c.Login
	form, browser := l.URL != "" || len(l.Fields) > 0, l.Page != "" || len(l.Steps) > 0
	switch {
	case form && browser:
		p.add("login", "a form (url, fields) or browser steps (page, steps), not both")
	case !form && !browser:
		p.add("login", "say how to log in: a form (url, fields) or browser steps (page, steps)")
	case form:
		if l.URL == "" {
			p.add("login.url", "required: the URL the login form posts to")
		} else {
			checkURL(p, "login.url", l.URL, "http", "https")
		}
		if l.FormURL != "" {
			checkURL(p, "login.form_url", l.FormURL, "http", "https")
			if l.TokenField == "" {
				p.add("login.form_url", "is fetched only for token_field: name the input holding the token")
			}
		}
	case browser:
		if l.Page == "" {
			p.add("login.page", "required: the page the steps run on")
		} else {
			checkURL(p, "login.page", l.Page, "http", "https")
		}
		if len(l.Steps) == 0 {
			p.add("login.steps", "required: fill, click and wait steps")
		}
		for i, s := range l.Steps {
			path := "login.steps[" + strconv.Itoa(i) + "]"
			n := 0
			for _, sel := range []string{s.Fill, s.Click, s.Wait} {
				if sel != "" {
					n++
					checkCSS(p, path, sel, "")
				}
			}
			switch {
			case n != 1:
				p.add(path, "want exactly one of fill, click or wait (a CSS selector)")
			case s.Value != "" && s.Fill == "":
				p.add(path+".value", "goes with fill only")
			}
		}
	}
	if l.TokenField != "" && l.URL == "" {
		p.add("login.token_field", "goes with a form login (url)")
	}
	lo := l.LoggedOut
	if len(lo.Status) == 0 && lo.RedirectTo == "" && lo.Selector == "" {
		p.add("login.logged_out", "required: how a page shows the session is gone (status, redirect_to or selector); without it a worker would save login pages")
	}
	for i, s := range lo.Status {
		if s < 100 || s > 599 || (s >= 200 && s < 300) {
			p.add("login.logged_out.status["+strconv.Itoa(i)+"]", "%d: want a 1xx, 3xx, 4xx or 5xx status", s)
		}
	}
	if r := lo.RedirectTo; r != "" && !strings.HasPrefix(r, "/") {
		checkURL(p, "login.logged_out.redirect_to", r, "http", "https")
	}
	if lo.Selector != "" {
		checkCSS(p, "login.logged_out.selector", lo.Selector, "")
	}
	if !c.Fetch.CookiesOn() {
		p.add("login", "needs fetch.cookies: true (the default): a session lives in cookies")
	}
	if len(l.Steps) > 0 && slices.ContainsFunc(l.Steps, func(s LoginStep) bool { return strings.ContainsAny(s.Value, "\x00") }) {
		p.add("login.steps", "a value holds a NUL byte")
	}
}

func checkCSS(p *problems, path, sel, also string) {
	if _, err := cascadia.Parse(sel); err != nil {
		p.add(path, "%s is not a valid CSS selector%s: %v", quote(sel), also, err)
	}
}

// redacted is l with every field value and step value hidden: they are
// passwords as often as not, written in the file or not.
func (l Login) redacted() Login {
	r := l
	r.Fields = make(map[string]string, len(l.Fields))
	for k := range l.Fields {
		r.Fields[k] = "xxxxx"
	}
	r.Steps = slices.Clone(l.Steps)
	for i := range r.Steps {
		if r.Steps[i].Value != "" {
			r.Steps[i].Value = "xxxxx"
		}
	}
	r.LoggedOut.Status = slices.Clone(l.LoggedOut.Status)
	return r
}
