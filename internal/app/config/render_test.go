package config

import (
	"errors"
	"strings"
	"testing"
)

// TestRenderConfig: the rendering, cookie, identity and login keys read
// into the config, with their defaults.
func TestRenderConfig(t *testing.T) {
	src := `crawl: x
scraper: {seeds: ['https://a.org/']}
fetch:
  render:
    - {match: '/js/', wait_for: '#late', timeout: 10s, scroll: 5}
    - {match: '/idle', wait_for: network idle}
  render_concurrency: 3
  render_browser: /usr/bin/chromium
  cookies_file: cookies.txt
  user_agents: ['A/1', 'B/2']
  user_agent_mode: sticky
saver: {capture: [pdf, screenshot]}
login:
  url: https://a.org/login
  token_field: csrf
  fields: {user: ada, password: '${PW}'}
  logged_out: {status: [401, 403], redirect_to: /login, selector: 'form#login'}
`
	cfg, err := parse([]byte(src), "r.yaml", envOf(map[string]string{"PW": "s3cret-pass"}))
	if err != nil {
		t.Fatal(err)
	}
	f := cfg.Fetch
	if len(f.Render) != 2 || f.Render[0].Scroll != 5 || f.Render[1].WaitFor != "network idle" || f.RenderConcurrency != 3 ||
		!f.CookiesOn() || f.CookiesFile != "cookies.txt" || f.UserAgentMode != "sticky" || len(cfg.RenderKinds()) != 2 {
		t.Errorf("fetch: %+v", f)
	}
	if !cfg.Login.Set() || cfg.Login.Fields["password"] != "s3cret-pass" || cfg.Login.LoggedOut.RedirectTo != "/login" {
		t.Fatalf("login: %+v", cfg.Login)
	}
	b, err := Marshal(cfg.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret") || strings.Contains(string(b), "ada") {
		t.Errorf("redacted config shows a login field:\n%s", b)
	}
	if cfg.Login.Fields["password"] != "s3cret-pass" {
		t.Error("Redacted changed the config")
	}
}

// TestBadRenderConfig: every key of rendering, cookies, identity and
// login refused for each way it can be wrong, named with its line.
func TestBadRenderConfig(t *testing.T) {
	const head = "crawl: x\nscraper: {seeds: ['https://a.org/']}\n"
	const lo = "  logged_out: {redirect_to: /login}\n"
	tests := []struct{ name, yaml, path, msg string }{
		{"render no match", "fetch:\n  render: [{wait_for: '#a'}]\n", "fetch.render[0].match", "required"},
		{"render bad match", "fetch:\n  render: [{match: '(a'}]\n", "fetch.render[0].match", "missing closing )"},
		{"render bad wait_for", "fetch:\n  render: [{match: a, wait_for: 'div[['}]\n", "fetch.render[0].wait_for", "not a valid CSS selector"},
		{"render idle hyphen", "fetch:\n  render: [{match: a, wait_for: 'network-idle'}]\n", "fetch.render[0].wait_for", "did you mean \"network idle\""},
		{"render idle joined", "fetch:\n  render: [{match: a, wait_for: networkidle0}]\n", "fetch.render[0].wait_for", "did you mean"},
		{"render idle case", "fetch:\n  render: [{match: a, wait_for: 'Network Idle'}]\n", "fetch.render[0].wait_for", "did you mean"},
		{"render idle underscore", "fetch:\n  render: [{match: a, wait_for: network_idle}]\n", "fetch.render[0].wait_for", "did you mean"},
		{"render timeout short", "fetch:\n  render: [{match: a, timeout: 1ms}]\n", "fetch.render[0].timeout", "out of range"},
		{"render timeout long", "fetch:\n  render: [{match: a, timeout: 2h}]\n", "fetch.render[0].timeout", "out of range"},
		{"render scroll negative", "fetch:\n  render: [{match: a, scroll: -1}]\n", "fetch.render[0].scroll", "out of range"},
		{"render scroll huge", "fetch:\n  render: [{match: a, scroll: 5000}]\n", "fetch.render[0].scroll", "out of range"},
		{"render unknown key", "fetch:\n  render: [{match: a, wait: '#a'}]\n", "fetch.render[0].wait", "unknown key"},
		{"render not a list", "fetch:\n  render: {match: a}\n", "fetch.render", "expected a list"},
		{"render concurrency", "fetch:\n  render_concurrency: 100\n", "fetch.render_concurrency", "out of range"},
		{"render concurrency negative", "fetch:\n  render_concurrency: -1\n", "fetch.render_concurrency", "out of range"},
		{"capture unknown", "fetch:\n  render: [{match: a}]\nsaver: {capture: [jpeg]}\n", "saver.capture[0]", `unknown copy "jpeg"`},
		{"capture twice", "fetch:\n  render: [{match: a}]\nsaver: {capture: [pdf, PDF]}\n", "saver.capture[1]", "listed twice"},
		{"capture alias twice", "fetch:\n  render: [{match: a}]\nsaver: {capture: [png, screenshot]}\n", "saver.capture[1]", "listed twice"},
		{"capture without render", "saver: {capture: [pdf]}\n", "saver.capture", "add fetch.render rules"},
		{"cookies not a bool", "fetch: {cookies: maybe}\n", "fetch.cookies", "maybe"},
		{"cookies file without cookies", "fetch: {cookies: false, cookies_file: c.txt}\n", "fetch.cookies_file", "cookies are off"},
		{"user agent empty", "fetch: {user_agents: ['A/1', '']}\n", "fetch.user_agents[1]", "empty"},
		{"user agent newline", "fetch: {user_agents: [\"A\\nB\"]}\n", "fetch.user_agents[0]", "control character"},
		{"user agent mode", "fetch: {user_agent_mode: random}\n", "fetch.user_agent_mode", `"random" (want rotate or sticky)`},
		{"login only logged_out", "login:\n" + lo, "login", "say how to log in"},
		{"login both", "login:\n  url: https://a.org/login\n  page: https://a.org/login\n  steps: [{click: '#go'}]\n" + lo, "login", "not both"},
		{"login fields without url", "login:\n  fields: {u: a}\n" + lo, "login.url", "required"},
		{"login url scheme", "login:\n  url: ftp://a.org/login\n" + lo, "login.url", `scheme "ftp"`},
		{"login form_url without token", "login:\n  url: https://a.org/login\n  form_url: https://a.org/form\n" + lo, "login.form_url", "token_field"},
		{"login no logged_out", "login:\n  url: https://a.org/login\n", "login.logged_out", "required"},
		{"login status 200", "login:\n  url: https://a.org/login\n  logged_out: {status: [200]}\n", "login.logged_out.status[0]", "200"},
		{"login status 999", "login:\n  url: https://a.org/login\n  logged_out: {status: [999]}\n", "login.logged_out.status[0]", "999"},
		{"login redirect relative", "login:\n  url: https://a.org/login\n  logged_out: {redirect_to: login}\n", "login.logged_out.redirect_to", "not an absolute URL"},
		{"login bad selector", "login:\n  url: https://a.org/login\n  logged_out: {selector: 'form[['}\n", "login.logged_out.selector", "not a valid CSS selector"},
		{"login without cookies", "fetch: {cookies: false}\nlogin:\n  url: https://a.org/login\n" + lo, "login", "needs fetch.cookies"},
		{"login steps without page", "login:\n  steps: [{click: '#go'}]\n" + lo, "login.page", "required"},
		{"login page without steps", "login:\n  page: https://a.org/login\n" + lo, "login.steps", "required"},
		{"login step two actions", "login:\n  page: https://a.org/login\n  steps: [{fill: '#u', click: '#go'}]\n" + lo, "login.steps[0]", "exactly one of"},
		{"login step no action", "login:\n  page: https://a.org/login\n  steps: [{value: x}]\n" + lo, "login.steps[0]", "exactly one of"},
		{"login step value on click", "login:\n  page: https://a.org/login\n  steps: [{click: '#go', value: x}]\n" + lo, "login.steps[0].value", "fill only"},
		{"login step bad selector", "login:\n  page: https://a.org/login\n  steps: [{fill: '#u', value: a}, {wait: 'div >'}]\n" + lo, "login.steps[1]", "not a valid CSS selector"},
		{"login step unknown key", "login:\n  page: https://a.org/login\n  steps: [{type: '#u'}]\n" + lo, "login.steps[0].type", "unknown key"},
		{"login token without url", "login:\n  page: https://a.org/login\n  token_field: csrf\n  steps: [{click: '#go'}]\n" + lo, "login.token_field", "form login"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte(head+tt.yaml), "r.yaml", envOf(nil))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("accepted or not ErrInvalid: %v", err)
			}
			for _, fe := range fieldErrors(err) {
				if fe.Path == tt.path && strings.Contains(fe.Error(), tt.msg) {
					if !strings.Contains(fe.Error(), "r.yaml:") {
						t.Errorf("no file:line: %v", fe)
					}
					return
				}
			}
			t.Errorf("want %s: ...%s...; got:\n%v", tt.path, tt.msg, err)
		})
	}
}
