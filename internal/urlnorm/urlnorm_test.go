package urlnorm

import (
	"errors"
	"net/url"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want string
		sort     bool
		err      error
	}{
		{in: "HTTP://Example.ORG", want: "http://example.org/"},
		{in: "http://example.org:80/a", want: "http://example.org/a"},
		{in: "https://example.org:443/a", want: "https://example.org/a"},
		{in: "https://example.org:8443/a", want: "https://example.org:8443/a"},
		{in: "http://example.org:/a", want: "http://example.org/a"},
		{in: "http://example.org/a/./b/../c", want: "http://example.org/a/c"},
		{in: "http://example.org/../../a", want: "http://example.org/a"},
		{in: "http://example.org/a/%2e%2E/b", want: "http://example.org/b"},
		{in: "http://example.org/%7euser/%41", want: "http://example.org/~user/A"},
		{in: "http://@example.org/", want: "http://example.org/"},
		{in: "http://:@example.org/", want: "http://example.org/"},
		{in: "http://u@example.org/", want: "http://u@example.org/"},
		{in: "http://example.org/a%2fb", want: "http://example.org/a%2Fb"},
		{in: "http://example.org/a b", want: "http://example.org/a%20b"},
		{in: "http://example.org/caf\xe9", want: "http://example.org/caf%E9"},
		{in: "http://example.org/100%", want: "http://example.org/100%25"},
		{in: "http://example.org/a#frag", want: "http://example.org/a"},
		{in: "http://example.org/a?", want: "http://example.org/a"},
		{in: "http://example.org/a?b=1&a=2", want: "http://example.org/a?b=1&a=2"},
		{in: "http://example.org/a?b=1&a=2&b=0", want: "http://example.org/a?a=2&b=1&b=0", sort: true},
		{in: "http://example.org/?q=a b&x=%7e", want: "http://example.org/?q=a%20b&x=~"},
		{in: "http://BÜCHER.example/", want: "http://xn--bcher-kva.example/"},
		{in: "http://[::1]:8080/x", want: "http://[::1]:8080/x"},
		{in: "http://[0:0::1]/", want: "http://[::1]/"},
		{in: "  http://example.org/\n", want: "http://example.org/"},
		{in: "mailto:a@example.org", err: ErrScheme},
		{in: "ftp://example.org/", err: ErrScheme},
		{in: "file:///etc/passwd", err: ErrScheme},
		{in: "/relative", err: ErrInvalid},
		{in: "http:///nohost", err: ErrInvalid},
		{in: "http://exa mple.org/", err: ErrInvalid},
		{in: "http://example.org:99999/", err: ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Options{SortQuery: tt.sort}.Normalize(tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Normalize(%q) = %q, %v; want error %v", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Normalize(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			again, err := Options{SortQuery: tt.sort}.Normalize(got)
			if err != nil || again != got {
				t.Fatalf("not idempotent: %q -> %q, %v", got, again, err)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	base, _ := url.Parse("http://example.org/dir/page.html?x=1")
	tests := []struct {
		ref, want string
		err       error
	}{
		{ref: "other.html", want: "http://example.org/dir/other.html"},
		{ref: "../up.html", want: "http://example.org/up.html"},
		{ref: "/abs", want: "http://example.org/abs"},
		{ref: "//cdn.example.net/lib.js", want: "http://cdn.example.net/lib.js"},
		{ref: "https://Other.example/x#y", want: "https://other.example/x"},
		{ref: "?q=2", want: "http://example.org/dir/page.html?q=2"},
		{ref: "#top", want: "http://example.org/dir/page.html?x=1"},
		{ref: " /sp\nlit ", want: "http://example.org/split"},
		{ref: "javascript:alert(1)", err: ErrScheme},
		{ref: "JavaScript:void(0)", err: ErrScheme},
		{ref: "mailto:someone@example.org", err: ErrScheme},
		{ref: "data:text/html,hi", err: ErrScheme},
		{ref: "tel:+123", err: ErrScheme},
		{ref: "http://[bad", err: ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			u, err := Resolve(base, tt.ref)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Resolve(%q) = %v, %v; want %v", tt.ref, u, err, tt.err)
				}
				return
			}
			if err != nil || u.String() != tt.want {
				t.Fatalf("Resolve(%q) = %v, %v; want %q", tt.ref, u, err, tt.want)
			}
		})
	}
}

// FuzzNormalize checks that Normalize never panics and is idempotent, and
// that Resolve agrees with Normalize.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"http://example.org/", "HTTPS://a.b:443/%7e/./../x?b=1&a=2#f", "http://[::1]:80/a b",
		"http://ex%41mple.org/", "http://u:p@h/", "http://h/%zz%2", "http://h/..%2f..", "//x/y",
		"http://h/?a=%20+&b", "http://xn--bcher-kva.example/", "http://BÜCHER.example/\xff",
	} {
		f.Add(s)
	}
	base, _ := url.Parse("http://example.org/a/b?c")
	for _, s := range []string{"x", "../y", "/z?q=1", "?only", "a:b", "1:b", "./c:d", "%zz/%41", "..", ".", "/./", "a b", "x#f", "http://example.org/a#b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, o := range []Options{{}, {SortQuery: true}} {
			n, err := o.Normalize(s)
			if err == nil {
				n2, err := o.Normalize(n)
				if err != nil || n2 != n {
					t.Fatalf("Normalize(%q) = %q; again = %q, %v", s, n, n2, err)
				}
			}
			u, err := o.Resolve(base, s)
			if err == nil {
				n3, err := o.Normalize(u.String())
				if err != nil || n3 != u.String() {
					t.Fatalf("Resolve(%q) = %q, not normal: %q, %v", s, u, n3, err)
				}
			}
			r, _ := o.NewResolver(base)
			fs, _, ferr := r.Resolve(s)
			if (ferr == nil) != (err == nil) || (err == nil && fs != u.String()) {
				t.Fatalf("Resolver.Resolve(%q) = %q, %v; Resolve = %v, %v", s, fs, ferr, u, err)
			}
		}
	})
}

func TestResolverAgrees(t *testing.T) {
	refs := []string{"x", "../y", "/z?q=1&b=2", "?only", "a:b", "1:b", "./c:d", "%zz/%41", "..", ".", "/./", "a b",
		"//other.example/x", "http://Example.org:80/p", "#f", "x#f", "/a/../../b", "q?", "d/e/./f/../g", "mailto:x", "é", "/%7e",
		"x#frag", "x#a#b", "x#%zz", "x# sp", "http://example.org/abs?q#f", "http://example.org", "http://example.org?q", "https://example.org/x", "http://example.org:80/x",
		// a path of "*", which net/url prints as "*" however it was spelt
		"%2A", "%2a", "*", "%2A?q", "%2A#f", "*?q", "%2A%2A", "./%2A", "%21"}
	for _, b := range []string{"http://example.org/a/b?c", "HTTP://EXAMPLE.org:80/dir/", "https://h.test", "http://u:p@h.test/x"} {
		base, _ := url.Parse(b)
		for _, o := range []Options{{}, {SortQuery: true}} {
			r, err := o.NewResolver(base)
			if err != nil {
				t.Fatal(err)
			}
			for _, ref := range refs {
				s, fu, ferr := r.Resolve(ref)
				u, err := o.Resolve(base, ref)
				if (ferr == nil) != (err == nil) || (err == nil && s != u.String()) {
					t.Errorf("%s + %q: resolver %q, %v; Resolve %v, %v", b, ref, s, ferr, u, err)
				}
				if fu != nil && ferr == nil && fu.String() != s {
					t.Errorf("%s + %q: url %v != %q", b, ref, fu, s)
				}
			}
		}
	}
}
