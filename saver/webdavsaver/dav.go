package webdavsaver

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// StatusError is a request the WebDAV server answered with an error
// status. Name is the file or collection, relative to the saver's URL.
// A 401 or 403 is saver.ErrAccessDenied (errors.Is).
type StatusError struct {
	Method string
	Name   string
	Code   int
	Status string // the status line's text ("507 Insufficient Storage")
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s %q: %s", e.Method, e.Name, e.Status)
	switch e.Code {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (check the user and password in saver.url, and their rights on the folder)"
	case http.StatusInsufficientStorage:
		msg += " (the server is out of space or over the user's quota)"
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		msg += " (the server redirects: set saver.url to the collection's own URL, https:// where it moved there)"
	}
	return msg
}

// Is makes a refusal of the credentials saver.ErrAccessDenied.
func (e *StatusError) Is(target error) bool {
	return target == saver.ErrAccessDenied && (e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden)
}

// Temporary reports whether the same request may succeed later with the
// same config: a server error (5xx: down, overloaded, out of space), a
// timeout (408), a file locked by another client (423) or throttling
// (429). The saver keeps what failed and tries it again at the next Flush
// either way.
func (e *StatusError) Temporary() bool {
	switch e.Code {
	case http.StatusRequestTimeout, http.StatusLocked, http.StatusTooManyRequests:
		return true
	}
	return e.Code >= 500
}

// retryBackoff are the waits before a request that failed for a moment
// (a refused connection, a 502, a 503) is sent again, within one save.
var retryBackoff = []time.Duration{250 * time.Millisecond, time.Second}

// client talks to one WebDAV server under one collection. Every name it
// takes is relative to that collection and unescaped; no URL it builds
// holds the user information, so no error prints the password.
type client struct {
	hc     *http.Client
	origin string // scheme://host[:port]
	root   string // the collection's path, unescaped, ending in "/"
	user   string
	pass   string
	auth   bool
	// mkcolMu makes one collection at a time: MKCOLs of one path at once
	// get 423 Locked from servers that lock it while they make it.
	mkcolMu sync.Mutex
}

// newClient parses the collection URL (http or https, user:password for
// Basic authentication); errors never repeat the URL.
func newClient(raw string, timeout time.Duration, conns int) (*client, error) {
	if raw == "" {
		return nil, storekit.ConfigErr("saver.url", "no URL")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, storekit.ConfigErr("saver.url", "not an http:// or https:// URL of a WebDAV collection")
	}
	c := &client{origin: u.Scheme + "://" + u.Host, root: u.Path}
	if !strings.HasSuffix(c.root, "/") {
		c.root += "/"
	}
	if u.User != nil {
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
		c.auth = true
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = conns
	// A redirect is answered, not followed: Go would follow a 301 to a
	// PUT with a GET, and its 200 would look like a saved page.
	c.hc = &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c, nil
}

// String is the collection's URL without its user information.
func (c *client) String() string { return c.origin + escapePath(c.root) }

// url is the URL of name; dir makes it a collection's (a trailing "/",
// which nginx wants of MKCOL).
func (c *client) url(name string, dir bool) string {
	s := c.origin + escapePath(c.root+name)
	if dir && !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s
}

// do sends one request, again after retryBackoff while it fails for a
// moment. The caller closes the response's body.
func (c *client) do(ctx context.Context, method, target string, hdr http.Header, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, target, rd)
		if err != nil {
			return nil, err
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		if c.auth {
			req.SetBasicAuth(c.user, c.pass)
		}
		resp, err := c.hc.Do(req)
		again := err != nil && ctx.Err() == nil
		if err == nil {
			switch resp.StatusCode {
			case http.StatusRequestTimeout, http.StatusLocked, http.StatusTooManyRequests, http.StatusInternalServerError,
				http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
				again = true
			}
		}
		if !again || attempt == len(retryBackoff) {
			return resp, err
		}
		if resp != nil {
			drain(resp)
		}
		t := time.NewTimer(retryBackoff[attempt])
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

// drain reads a little of what is left of a response, so that its
// connection is reused, and closes it.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// reqErr is a request that got no answer: the transport's error without
// the URL it repeats, as method and name.
func reqErr(method, name string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s %q: %w", method, name, err)
}

func statusErr(method, name string, resp *http.Response) error {
	return &StatusError{Method: method, Name: name, Code: resp.StatusCode, Status: resp.Status}
}

// put stores data at name. A missing collection on the way (409, or 404
// from servers that say so) is made with MKCOL, and the PUT sent again.
func (c *client) put(ctx context.Context, name, ctype string, data []byte) error {
	hdr := http.Header{"Content-Type": {ctype}}
	for made := false; ; made = true {
		resp, err := c.do(ctx, http.MethodPut, c.url(name, false), hdr, data)
		if err != nil {
			return reqErr(http.MethodPut, name, err)
		}
		drain(resp)
		switch {
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			return nil
		case !made && (resp.StatusCode == http.StatusConflict || resp.StatusCode == http.StatusNotFound):
			if err := c.mkcols(ctx, path.Dir(name)); err != nil {
				return err
			}
		case resp.StatusCode == http.StatusConflict || resp.StatusCode == http.StatusNotFound:
			return fmt.Errorf("%w: a file may be in the place of a collection on the way (a template whose {path} makes /a a file and /a/b a folder)",
				statusErr(http.MethodPut, name, resp))
		default:
			return statusErr(http.MethodPut, name, resp)
		}
	}
}

// mkcols makes the collection dir (relative to the root, "." for the root
// itself) and the missing ones above it, up to the server's root: MKCOL
// climbs while it answers 409 (the parent is missing), then makes the
// missing ones top down. 405 is a collection that exists.
func (c *client) mkcols(ctx context.Context, dir string) error {
	c.mkcolMu.Lock()
	defer c.mkcolMu.Unlock()
	full := path.Clean(c.root + dir)
	var missing []string
	for p := full; ; p = path.Dir(p) {
		if p == "/" {
			return fmt.Errorf("MKCOL %q: no collection on the way to it exists", c.rel(full))
		}
		code, err := c.mkcol(ctx, p)
		if err != nil {
			return err
		}
		if code != http.StatusConflict {
			break
		}
		missing = append(missing, p)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		code, err := c.mkcol(ctx, missing[i])
		if err != nil {
			return err
		}
		if code == http.StatusConflict {
			return &StatusError{Method: "MKCOL", Name: c.rel(missing[i]), Code: code, Status: "409 Conflict"}
		}
	}
	return nil
}

// mkcol sends one MKCOL for the absolute path p: 201 (made), 405 (there)
// and 409 (parent missing) are answers, other statuses errors.
func (c *client) mkcol(ctx context.Context, p string) (int, error) {
	resp, err := c.do(ctx, "MKCOL", c.origin+escapePath(p)+"/", nil, nil)
	if err != nil {
		return 0, reqErr("MKCOL", c.rel(p), err)
	}
	drain(resp)
	switch resp.StatusCode {
	case http.StatusCreated, http.StatusOK, http.StatusNoContent, http.StatusMethodNotAllowed, http.StatusConflict:
		return resp.StatusCode, nil
	}
	return 0, statusErr("MKCOL", c.rel(p), resp)
}

// rel is an absolute path as a name relative to the root, for messages.
func (c *client) rel(p string) string {
	if r, ok := strings.CutPrefix(p+"/", c.root); ok {
		return strings.TrimSuffix(r, "/")
	}
	return p
}

// entry is one member of a collection as PROPFIND lists it.
type entry struct {
	name string // relative to the collection listed, one element
	dir  bool
	size int64 // -1 when not given
}

const propfindBody = `<?xml version="1.0" encoding="utf-8"?>` +
	`<d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getcontentlength/></d:prop></d:propfind>`

// davResponse is one <response> of a PROPFIND's multistatus.
type davResponse struct {
	Href     string `xml:"DAV: href"`
	Propstat []struct {
		Status string `xml:"DAV: status"`
		Prop   struct {
			ResourceType struct {
				Collection *struct{} `xml:"DAV: collection"`
			} `xml:"DAV: resourcetype"`
			Length string `xml:"DAV: getcontentlength"`
		} `xml:"DAV: prop"`
	} `xml:"DAV: propstat"`
}

// maxListing bounds the listing of one collection (about a million
// members), so that a server cannot drive a Walk's memory without end.
const maxListing = 256 << 20

// errNoCollection is a PROPFIND of a collection that is not there (404).
var errNoCollection = errors.New("no such collection")

// list returns the members of the collection dir (relative to the root,
// "" for the root), from PROPFIND with Depth 1, and the hrefs it refused:
// outside dir or not one element below it. The listing is read one
// <response> at a time, so it costs its entries, not its text; one over
// maxListing is an error.
func (c *client) list(ctx context.Context, dir string) ([]entry, []string, error) {
	hdr := http.Header{"Depth": {"1"}, "Content-Type": {"application/xml; charset=utf-8"}}
	resp, err := c.do(ctx, "PROPFIND", c.url(dir, true), hdr, []byte(propfindBody))
	if err != nil {
		return nil, nil, reqErr("PROPFIND", dir, err)
	}
	defer drain(resp)
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, nil, fmt.Errorf("PROPFIND %q: %w", dir, errNoCollection)
	case resp.StatusCode != http.StatusMultiStatus:
		return nil, nil, statusErr("PROPFIND", dir, resp)
	}
	self := path.Clean(c.root+dir) + "/"
	if self == "//" {
		self = "/"
	}
	var out []entry
	var refused []string
	dec := xml.NewDecoder(io.LimitReader(resp.Body, maxListing))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("PROPFIND %q: read the listing: %w", dir, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Space != "DAV:" || se.Name.Local != "response" {
			continue
		}
		var r davResponse
		if err := dec.DecodeElement(&r, &se); err != nil {
			return nil, nil, fmt.Errorf("PROPFIND %q: read the listing: %w", dir, err)
		}
		e, ok, bad := member(c.origin, self, r)
		switch {
		case bad != "":
			refused = append(refused, bad)
		case ok:
			out = append(out, e)
		}
	}
	return out, refused, nil
}

// member reads one <response> of the listing of the collection at the
// absolute path self on origin: ok for a member, bad naming an href that
// is not one (another server's, outside self, deeper, "." or "..").
func member(origin, self string, r davResponse) (e entry, ok bool, bad string) {
	u, err := url.Parse(strings.TrimSpace(r.Href))
	if err != nil || (u.Host != "" && u.Scheme+"://"+u.Host != origin) {
		return e, false, r.Href
	}
	p := u.Path
	if p+"/" == self || p == self {
		return e, false, "" // the collection itself
	}
	name, inside := strings.CutPrefix(p, self)
	name = strings.TrimSuffix(name, "/")
	if !inside || name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return e, false, p
	}
	e = entry{name: name, size: -1}
	for _, ps := range r.Propstat {
		if !strings.Contains(ps.Status, " 200") {
			continue
		}
		if ps.Prop.ResourceType.Collection != nil {
			e.dir = true
		}
		var n int64
		if _, err := fmt.Sscan(ps.Prop.Length, &n); err == nil && n >= 0 {
			e.size = n
		}
	}
	return e, true, ""
}

// get reads the file at name whole, if it is at most saver.MaxWalkBody
// bytes (else storekit.ErrTooLarge).
func (c *client) get(ctx context.Context, name string) ([]byte, error) {
	resp, err := c.do(ctx, http.MethodGet, c.url(name, false), nil, nil)
	if err != nil {
		return nil, reqErr(http.MethodGet, name, err)
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, statusErr(http.MethodGet, name, resp)
	}
	if resp.ContentLength > saver.MaxWalkBody {
		return nil, storekit.ErrTooLarge(resp.ContentLength)
	}
	b, err := storekit.ReadCapped(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %q: %w", name, err)
	}
	return b, nil
}

// probe checks that the server answers for the collection and takes the
// credentials (PROPFIND, Depth 0), writing nothing. A collection not
// there yet is fine: the first save makes it. It says when the server
// lists no collection (405, 501: nginx without its dav-ext module).
func (c *client) probe(ctx context.Context) (lists bool, err error) {
	hdr := http.Header{"Depth": {"0"}, "Content-Type": {"application/xml; charset=utf-8"}}
	resp, err := c.do(ctx, "PROPFIND", c.url("", true), hdr, []byte(propfindBody))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return false, fmt.Errorf("PROPFIND %s: %w", c, err)
	}
	drain(resp)
	switch resp.StatusCode {
	case http.StatusMultiStatus, http.StatusOK, http.StatusNotFound:
		return true, nil
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return false, nil
	}
	return false, fmt.Errorf("%s: %w", c, statusErr("PROPFIND", ".", resp))
}
