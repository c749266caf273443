package redact

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

// passwords are the spellings that break a URL parser: every character
// that ends the authority, '@' itself, and an escaped form.
var passwords = []string{"S3c#r3t", "S3c/r3t", "S3c?r3t", "S3c@r3t", "S3cr3t", "S3c%2Fr3t", "S3c:r3t", "S3c r3t"}

func TestURLHidesUserinfo(t *testing.T) {
	for _, pw := range passwords {
		for _, f := range []string{"redis://u:%s@127.0.0.1:6379/0", "rediss://%s@h/1", "socks5://u:%s@[::1]:1080", "http://u:%s@h/p?q=@x"} {
			raw := fmt.Sprintf(f, pw)
			got := URL(raw)
			if strings.Contains(got, "S3c") || strings.Contains(got, "r3t") {
				t.Errorf("URL(%q) = %q: shows part of the password", raw, got)
			}
			if !strings.Contains(got, Mark+"@") {
				t.Errorf("URL(%q) = %q: no %s@", raw, got, Mark)
			}
			if err := ParseError(raw, url.Parse); err != nil && (strings.Contains(err.Error(), "S3c") || strings.Contains(err.Error(), "r3t")) {
				t.Errorf("ParseError(%q) = %v: shows part of the password", raw, err)
			}
		}
	}
}

func TestString(t *testing.T) {
	r := New("k3y-from-env", "ab", "sp ace/x")
	cases := []struct{ in, want string }{
		{"no url here", "no url here"},
		{"http 404: http://h/item/5?api_key=k3y-from-env: not found", "http 404: http://h/item/5?api_key=xxxxx: not found"},
		{"get http://h/x?id=1&access_token=abc&b=2#frag end", "get http://h/x?id=1&access_token=xxxxx&b=2#frag end"},
		{"get http://h/x?q=k3y-from-env", "get http://h/x?q=xxxxx"},
		{"dial redis://user:pw@h:1/0 refused", "dial redis://xxxxx@h:1/0 refused"},
		{"https://mastodon.example/@bob stays", "https://mastodon.example/@bob stays"},
		{`"http://u:p@h/"`, `"http://xxxxx@h/"`},
		{"escaped http://h/?x=sp+ace%2Fx and sp%20ace%2Fx", "escaped http://h/?x=xxxxx and xxxxx"},
		{"short ab is no secret", "short ab is no secret"},
		{"two http://a:b@h1/ http://h2/?token=t", "two http://xxxxx@h1/ http://h2/?token=xxxxx"},
	}
	for _, c := range cases {
		if got := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestErrorKeepsChain(t *testing.T) {
	r := New("hunter22")
	err := r.Error(fmt.Errorf("open hunter22: %w", fs.ErrNotExist))
	if strings.Contains(err.Error(), "hunter22") || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Error: %v (Is ErrNotExist: %v)", err, errors.Is(err, fs.ErrNotExist))
	}
	if r.Error(nil) != nil {
		t.Fatal("Error(nil) != nil")
	}
}

func TestReplaceAttr(t *testing.T) {
	r := New("k3y-from-env")
	for _, json := range []bool{false, true} {
		var buf bytes.Buffer
		opts := &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: r.ReplaceAttr}
		var h slog.Handler = slog.NewTextHandler(&buf, opts)
		if json {
			h = slog.NewJSONHandler(&buf, opts)
		}
		log := slog.New(h)
		log.Debug("fetch http://h/?api_key=k3y-from-env failed", "url", "http://u:pw@h/", "err", errors.New("k3y-from-env"),
			slog.Group("g", "v", []string{"k3y-from-env"}))
		if out := buf.String(); strings.Contains(out, "k3y-from-env") || strings.Contains(out, "pw@") {
			t.Errorf("json=%v: log shows a secret: %s", json, out)
		}
	}
}

// FuzzURLHidesPassword: whatever the password holds, URL shows none of it.
func FuzzURLHidesPassword(f *testing.F) {
	for _, pw := range passwords {
		f.Add(pw)
	}
	f.Fuzz(func(t *testing.T, pw string) {
		const shape = "redis://u:%s@h:1/0?x=1"
		// What the URL redacts to whatever its password (the whole userinfo
		// is the mark): a password found in it, "/x" in "//xxxxx", shows nothing.
		anyway := URL(fmt.Sprintf(shape, "pw"))
		if pw == "" || strings.Contains(anyway, pw) {
			return // nothing to hide, or text the redacted URL holds anyway
		}
		if got := URL(fmt.Sprintf(shape, pw)); strings.Contains(got, pw) {
			t.Fatalf("URL shows the password %q: %q", pw, got)
		}
	})
}
