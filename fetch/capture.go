package fetch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"time"
)

// capture records what an archive needs of one hop beyond the decoded
// body: the server's address and, with Config.KeepWireBody, the body as
// transmitted when we decode a Content-Encoding.
type capture struct {
	remote string
	wire   *bytes.Buffer
}

// trace makes ctx report the connection a request is sent on. GotConn runs
// inside RoundTrip, before Do returns, so reading remote afterwards is safe.
func (c *capture) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if info.Conn != nil && info.Conn.RemoteAddr() != nil {
				c.remote = info.Conn.RemoteAddr().String()
			}
		},
	})
}

// teeWire makes resp's body copy the bytes read from it, when keep is set
// and the body is content-encoded. readBody bounds how much of the encoded
// stream it reads (a little over MaxBody), which bounds the copy too.
func (c *capture) teeWire(resp *http.Response, keep bool) {
	enc := strings.TrimSpace(resp.Header.Get("Content-Encoding"))
	if !keep || enc == "" || strings.EqualFold(enc, "identity") {
		return
	}
	c.wire = new(bytes.Buffer)
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, c.wire), resp.Body}
}

// wireBody is the transmitted body, nil when it was not content-encoded.
func (c *capture) wireBody() []byte {
	if c.wire == nil {
		return nil
	}
	return c.wire.Bytes()
}

// reason is the reason phrase of a status line such as "200 OK" (Go's
// http.Response.Status, which keeps the server's wording).
func reason(status string) string {
	_, r, _ := strings.Cut(status, " ")
	return r
}

// redirectBodyMax bounds the body of a redirect kept for an archive; a
// longer one is drained as far as drain goes and not kept.
const redirectBodyMax = 64 << 10

// headResponse is what an archive needs of an answer whose body is not
// read: the exchange, no body.
func headResponse(req *http.Request, resp *http.Response, cp *capture) *Response {
	return &Response{URL: req.URL, Status: resp.StatusCode, Header: resp.Header,
		ContentType: mediaType(resp.Header.Get("Content-Type"), nil), FetchedAt: time.Now(), Request: req,
		Proto: resp.Proto, Reason: reason(resp.Status), RemoteAddr: cp.remote}
}

// redirectResponse reads a redirect's body, as transmitted, when it is
// small (a "Moved" page); a content-encoded one is kept as WireBody only,
// as nothing reads it but an archive.
func redirectResponse(req *http.Request, resp *http.Response, cp *capture) *Response {
	r := headResponse(req, resp, cp)
	raw, err := io.ReadAll(io.LimitReader(resp.Body, redirectBodyMax+1))
	if err != nil || len(raw) > redirectBodyMax {
		drain(resp.Body)
		return r
	}
	if enc := strings.TrimSpace(resp.Header.Get("Content-Encoding")); enc != "" && !strings.EqualFold(enc, "identity") {
		r.WireBody = raw
	} else {
		r.Body = raw
	}
	return r
}
