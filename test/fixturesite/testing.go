package fixturesite

import "testing"

// Start is the one way tests serve the site: a new site with opts on a free
// 127.0.0.1 port, closed when the test ends. It fails the test if the site
// cannot listen.
func Start(t testing.TB, opts Options) *Site {
	t.Helper()
	s := New(opts)
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
