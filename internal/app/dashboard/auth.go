package dashboard

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// cookieName holds the token in a browser, set by ?token= once.
const cookieName = "distscrape_dashboard"

// ErrNeedToken is CheckListen's answer for a non-loopback address without
// a token.
var ErrNeedToken = errors.New("a dashboard that listens beyond loopback needs a token")

// CheckListen refuses an address other machines can reach (a non-loopback
// IP, a host name other than localhost, or every interface) when there is
// no token to keep them out.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w (want host:port, e.g. 127.0.0.1:8080)", addr, err)
	}
	if token != "" || loopbackHost(host) {
		return nil
	}
	return fmt.Errorf("listen address %q: %w: pass --token or set dashboard.token (e.g. dashboard.token: ${DASHBOARD_TOKEN}), or listen on 127.0.0.1", addr, ErrNeedToken)
}

// loopbackHost says a host name or IP reaches this machine only.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authorized lets a request through, or answers it (401, 403, or a
// redirect that trades ?token= for a cookie) and returns false.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Token == "" {
		// No token means loopback only; a page of another site that
		// rebinds its name to 127.0.0.1 still sends its own Host.
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if !loopbackHost(strings.Trim(host, "[]")) {
			http.Error(w, "403 forbidden: this dashboard has no token and answers to loopback names only (127.0.0.1, localhost, [::1])", http.StatusForbidden)
			return false
		}
		return true
	}
	if q := r.URL.Query(); q.Has("token") {
		if !s.tokenIs(q.Get("token")) {
			unauthorized(w)
			return false
		}
		// Trade the token in the URL (history, logs of proxies) for a
		// cookie no script can read and no other site can send.
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.cfg.Token, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		q.Del("token")
		// One leading slash: "//host/" in a Location is another site.
		u := url.URL{Path: "/" + strings.TrimLeft(r.URL.Path, `/\`), RawQuery: q.Encode()}
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
		return false
	}
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.tokenIs(auth) {
		return true
	}
	if c, err := r.Cookie(cookieName); err == nil && s.tokenIs(c.Value) {
		return true
	}
	unauthorized(w)
	return false
}

func (s *Server) tokenIs(got string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="distscrape dashboard"`)
	http.Error(w, "401 unauthorized: open the dashboard once as /?token=TOKEN (or send Authorization: Bearer TOKEN)", http.StatusUnauthorized)
}

// csrfOK checks the action's CSRF token (a header a page of another site
// cannot set without a preflight this server never grants).
func (s *Server) csrfOK(r *http.Request) bool {
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("X-CSRF-Token")), []byte(s.csrf)) == 1
}
