package fixturesite

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// A site behind a login (issue 25). No page of the link site links to it.
//
//   - LoginPath: GET is the login form (form#login; a hidden CSRF token
//     in the input named LoginTokenField, one the site issued; user and
//     password inputs; a submit button #go). POST with LoginUser,
//     LoginPassword and a token it issued sets the session cookie
//     LoginCookie (HttpOnly) and redirects (303) to MembersPath; anything
//     else answers 401 with the form again.
//   - MembersPath: the index of MembersPages members-only pages,
//     MembersPath{i} for i in 1..MembersPages, each holding
//     MembersText{i}. Without a live session every members page redirects
//     (302) to LoginPath?next=…; ExpireSessions ends every session.
//   - CookieSetPath sets the cookie CookieStep (by Set-Cookie) and links
//     to CookieNeedPath, which answers 403 without it; CookieScriptPath's
//     script sets CookieScript with document.cookie and links to
//     CookieNeedJSPath, which answers 403 without that one.
const (
	LoginPath        = "/login"
	LoginUser        = "ada"
	LoginPassword    = "correct horse battery staple"
	LoginTokenField  = "csrf"
	LoginCookie      = "sid"
	LoginFormMarker  = "LOGIN-FORM-PAGE"
	MembersPath      = "/members/"
	MembersPages     = 12
	MembersText      = "Members only text "
	CookieSetPath    = "/cookie/set"
	CookieNeedPath   = "/cookie/need"
	CookieScriptPath = "/cookie/script"
	CookieNeedJSPath = "/cookie/needjs"
	CookieStep       = "step"
	CookieScript     = "jsstep"
	CookieOKText     = "The cookie arrived"
)

// loginState is the sessions and the tokens the site issued.
type loginState struct {
	mu       sync.Mutex
	tokens   map[string]bool
	sessions map[string]bool
	logins   int
	refused  int
}

func loginPaths(p string) bool {
	return p == LoginPath || strings.HasPrefix(p, MembersPath) || strings.HasPrefix(p, "/cookie/")
}

// ExpireSessions ends every session: the next members page a client
// asks for with one redirects to the login.
func (s *Site) ExpireSessions() {
	s.login.mu.Lock()
	defer s.login.mu.Unlock()
	clear(s.login.sessions)
}

// Logins is how many logins the site accepted, and refused.
func (s *Site) Logins() (ok, refused int) {
	s.login.mu.Lock()
	defer s.login.mu.Unlock()
	return s.login.logins, s.login.refused
}

func randomHex() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

const loginForm = `<!DOCTYPE html>
<html><head><title>Log in</title></head><body><h1>%s</h1>
<form id="login" method="post" action="/login">
<input type="hidden" name="%s" value="%s">
<input name="user" id="user"><input name="password" id="password" type="password">
<button type="submit" id="go">Log in</button>
</form></body></html>
`

// serveLogin serves the login pages; false when p is none of them.
func (s *Site) serveLogin(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	h := w.Header()
	switch {
	case p == LoginPath && r.Method == http.MethodPost:
		_ = r.ParseForm()
		l := &s.login
		l.mu.Lock()
		ok := r.PostForm.Get("user") == LoginUser && r.PostForm.Get("password") == LoginPassword && l.tokens[r.PostForm.Get(LoginTokenField)]
		sid := ""
		if ok {
			sid = "s-" + randomHex()
			if l.sessions == nil {
				l.sessions = map[string]bool{}
			}
			l.sessions[sid] = true
			l.logins++
		} else {
			l.refused++
		}
		l.mu.Unlock()
		if !ok {
			h["Content-Type"] = htmlType
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, loginForm, LoginFormMarker+" (refused)", LoginTokenField, s.issueToken())
			return true
		}
		http.SetCookie(w, &http.Cookie{Name: LoginCookie, Value: sid, Path: "/", HttpOnly: true})
		http.Redirect(w, r, MembersPath, http.StatusSeeOther)
	case p == LoginPath:
		h["Content-Type"] = htmlType
		fmt.Fprintf(w, loginForm, LoginFormMarker, LoginTokenField, s.issueToken())
	case strings.HasPrefix(p, MembersPath):
		s.serveMembers(w, r)
	case p == CookieSetPath:
		http.SetCookie(w, &http.Cookie{Name: CookieStep, Value: "1", Path: "/"})
		h["Content-Type"] = htmlType
		fmt.Fprintf(w, `<!DOCTYPE html><html><body><a href="%s">next</a></body></html>`, CookieNeedPath)
	case p == CookieScriptPath:
		h["Content-Type"] = htmlType
		fmt.Fprintf(w, `<!DOCTYPE html><html><body><script>document.cookie = "%s=1; path=/";</script><a href="%s">next</a></body></html>`, CookieScript, CookieNeedJSPath)
	case p == CookieNeedPath || p == CookieNeedJSPath:
		name := CookieStep
		if p == CookieNeedJSPath {
			name = CookieScript
		}
		if c, err := r.Cookie(name); err != nil || c.Value != "1" {
			http.Error(w, "no "+name+" cookie", http.StatusForbidden)
			return true
		}
		h["Content-Type"] = htmlType
		fmt.Fprintf(w, "<!DOCTYPE html><html><body><p>%s: %s</p></body></html>", CookieOKText, name)
	default:
		return false
	}
	return true
}

func (s *Site) issueToken() string {
	t := randomHex()
	s.login.mu.Lock()
	defer s.login.mu.Unlock()
	if s.login.tokens == nil {
		s.login.tokens = map[string]bool{}
	}
	s.login.tokens[t] = true
	return t
}

func (s *Site) serveMembers(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(LoginCookie)
	s.login.mu.Lock()
	live := err == nil && s.login.sessions[c.Value]
	s.login.mu.Unlock()
	if !live {
		http.Redirect(w, r, LoginPath+"?next="+url.QueryEscape(r.URL.Path), http.StatusFound)
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, MembersPath)
	w.Header()["Content-Type"] = htmlType
	if rest == "" {
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><body><h1>Members</h1>\n")
		for i := 1; i <= MembersPages; i++ {
			fmt.Fprintf(&b, "<a href=\"%s%d\">member page %d</a>\n", MembersPath, i, i)
		}
		b.WriteString("</body></html>\n")
		_, _ = w.Write([]byte(b.String()))
		return
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 || n > MembersPages {
		http.NotFound(w, r)
		return
	}
	fmt.Fprintf(w, "<!DOCTYPE html><html><body><h1>Member page %d</h1><p class=\"secret\">%s%d</p></body></html>\n", n, MembersText, n)
}
