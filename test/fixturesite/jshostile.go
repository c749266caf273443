package fixturesite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Browser pages that fight their renderer (issue 33), under JSPrefix.
//
//   - JSNavPath?how=H&to=URL[&delay=MS]: a page holding <p id="origin">
//     JSNavOriginText and a link to JSNavOriginLink that sends its top
//     frame to URL, H being one of JSNavHows: location.replace,
//     location= after delay ms (default 100), a form POSTed by script,
//     a link clicked by script, a meta refresh (after delay/1000 s).
//   - JSNavTargetPath: the page those go to in scope: <p id="target">
//     JSNavTargetText and a link to JSNavTargetLink; it answers GET and
//     POST alike.
//   - JSNavLoopPath?n=N: location.replace to itself with N+1, forever.
//   - JSDownloadPath: an HTML page sent as an attachment, whose script
//     starts more downloads: an attachment in an iframe, a link with a
//     download attribute, a blob: URL with one, and at last sends its
//     top frame to an attachment. JSDownloadFilePath is the file.
//   - JSCookieReadPath: writes document.cookie into <pre id="cookies">;
//     JSCookieSetPath is the same page, sent with the cookies
//     JSCookieSecrets (HttpOnly, for another path: none a script of this
//     page may read) and JSCookieVisible (one it may).
//   - JSDialogPath?kind=K: opens an alert, confirm or prompt dialog
//     before writing <p id="after">JSDialogText and its answer.
//   - JSTallPath?h=PX: a page PX CSS pixels tall, ending with
//     <p id="bottom">JSTallText.
const (
	JSNavPath          = "/js/nav"
	JSNavTargetPath    = "/js/nav/target"
	JSNavLoopPath      = "/js/nav/loop"
	JSNavOriginText    = "The page as it stood"
	JSNavTargetText    = "The page navigated to"
	JSNavOriginLink    = "/js/nav/origin-link"
	JSNavTargetLink    = "/js/nav/target-link"
	JSDownloadPath     = "/js/download"
	JSDownloadFilePath = "/js/download/file.bin"
	JSDownloadText     = "Rendered, not downloaded"
	JSCookieReadPath   = "/js/cookie/read"
	JSCookieSetPath    = "/js/cookie/set"
	JSDialogPath       = "/js/dialog"
	JSDialogText       = "Written after the dialog"
	JSTallPath         = "/js/tall"
	JSTallText         = "The bottom of a tall page"
)

// JSCookieSecrets are the values of the cookies JSCookieSetPath sets
// that no script of JSCookieReadPath may read, by the way each is kept
// from it; JSCookieVisible the value one may read.
var JSCookieSecrets = map[string]string{"httponly": "secret-session-7f3a", "path": "secret-path-40de"}

const JSCookieVisible = "visible-pref-2c55"

// JSNavHows are the ways JSNavPath leaves itself.
var JSNavHows = []string{"replace", "assign", "submit", "click", "meta"}

const navHTML = `<!DOCTYPE html>
<html><head><title>Nav</title>%s</head><body><h1>Nav</h1>
<p id="origin">` + JSNavOriginText + `</p><a href="` + JSNavOriginLink + `">origin link</a>
<form id="f" method="post" action=%s><input name="q" value="1"></form>
<a id="away" href=%s>away</a>
<script>%s</script></body></html>
`

func navScript(how, to string, delay int) (head, script string) {
	t, _ := json.Marshal(to)
	switch how {
	case "replace":
		return "", "location.replace(" + string(t) + ");"
	case "assign":
		return "", fmt.Sprintf("setTimeout(() => { location = %s; }, %d);", t, delay)
	case "submit":
		return "", "document.getElementById('f').submit();"
	case "click":
		return "", "document.getElementById('away').click();"
	case "meta":
		return `<meta http-equiv="refresh" content=` + attr(fmt.Sprintf("%d;url=%s", delay/1000, to)) + `>`, ""
	}
	return "", ""
}

// attr quotes s as an HTML attribute value.
func attr(s string) string {
	r := strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;")
	return `"` + r.Replace(s) + `"`
}

const downloadHTML = `<!DOCTYPE html>
<html><head><title>Download</title></head><body><h1>Download</h1>
<p id="rendered">` + JSDownloadText + `</p>
<iframe src="` + JSDownloadFilePath + `?via=iframe"></iframe>
<a id="dl" href="` + JSDownloadFilePath + `?via=link" download="x.bin">file</a>
<script>
document.getElementById("dl").click();
const a = document.createElement("a");
a.href = URL.createObjectURL(new Blob(["blob download"], {type: "application/octet-stream"}));
a.download = "blob.bin"; document.body.appendChild(a); a.click();
setTimeout(() => { location = "` + JSDownloadFilePath + `?via=top"; }, 50);
</script></body></html>
`

const cookieReadHTML = `<!DOCTYPE html>
<html><head><title>Cookies</title></head><body><h1>Cookies</h1><pre id="cookies"></pre>
<script>document.getElementById("cookies").textContent = "cookies:" + document.cookie;</script>
</body></html>
`

const dialogHTML = `<!DOCTYPE html>
<html><head><title>Dialog</title></head><body><h1>Dialog</h1><div id="box"></div>
<script>
const kind = %s;
let got = "";
if (kind === "alert") got = String(alert("hi"));
if (kind === "confirm") got = String(confirm("sure?"));
if (kind === "prompt") got = String(prompt("name?", "x"));
const p = document.createElement("p"); p.id = "after"; p.textContent = %s + " " + got;
document.getElementById("box").appendChild(p);
</script></body></html>
`

// serveJSHostile serves the pages above; false for other paths.
func (s *Site) serveJSHostile(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	h := w.Header()
	switch r.URL.Path {
	case JSNavPath:
		delay, err := strconv.Atoi(q.Get("delay"))
		if err != nil {
			delay = 100
		}
		to := q.Get("to")
		head, script := navScript(q.Get("how"), to, delay)
		h["Content-Type"] = htmlType
		fmt.Fprintf(w, navHTML, head, attr(to), attr(to), script)
	case JSNavTargetPath:
		h["Content-Type"] = htmlType
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><title>Target</title></head><body><h1>Target</h1>\n<p id=\"target\">%s</p><a href=\"%s\">target link</a></body></html>\n", JSNavTargetText, JSNavTargetLink)
	case JSNavLoopPath:
		n, _ := strconv.Atoi(q.Get("n"))
		h["Content-Type"] = htmlType
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><title>Loop %d</title></head><body><p id=\"loop\">loop %d</p><script>location.replace(%q);</script></body></html>\n", n, n, JSNavLoopPath+"?n="+strconv.Itoa(n+1))
	case JSDownloadPath:
		h["Content-Type"] = htmlType
		h.Set("Content-Disposition", `attachment; filename="page.html"`)
		_, _ = w.Write([]byte(downloadHTML))
	case JSDownloadFilePath:
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", `attachment; filename="file-`+q.Get("via")+`.bin"`)
		_, _ = w.Write([]byte("downloaded " + q.Get("via")))
	case JSCookieSetPath, JSCookieReadPath:
		if r.URL.Path == JSCookieSetPath {
			for _, c := range []*http.Cookie{
				{Name: "sid", Value: JSCookieSecrets["httponly"], Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode},
				{Name: "elsewhere", Value: JSCookieSecrets["path"], Path: "/elsewhere/"},
				{Name: "pref", Value: JSCookieVisible, Path: "/", MaxAge: 3600, SameSite: http.SameSiteStrictMode},
			} {
				http.SetCookie(w, c)
			}
		}
		h["Content-Type"] = htmlType
		_, _ = w.Write([]byte(cookieReadHTML))
	case JSDialogPath:
		kind, _ := json.Marshal(q.Get("kind"))
		text, _ := json.Marshal(JSDialogText)
		h["Content-Type"] = htmlType
		fmt.Fprintf(w, dialogHTML, kind, text)
	case JSTallPath:
		px, _ := strconv.Atoi(q.Get("h"))
		h["Content-Type"] = htmlType
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><title>Tall</title></head><body style=\"margin:0\"><div style=\"height:%dpx;background:linear-gradient(red,blue)\"></div><p id=\"bottom\">%s</p></body></html>\n", max(px, 0), JSTallText)
	default:
		return false
	}
	return true
}
