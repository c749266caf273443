package driver

import (
	"slices"
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	var r Registry[int]
	if _, ok := r.Lookup("a"); ok || len(r.Kinds()) != 0 || r.Err() != nil {
		t.Fatal("the zero Registry is not empty")
	}
	r.Register("b", 2)
	r.Register("a", 1)
	if d, ok := r.Lookup("a"); !ok || d != 1 {
		t.Errorf("Lookup(a) = %d, %v", d, ok)
	}
	if k := r.Kinds(); !slices.Equal(k, []string{"a", "b"}) {
		t.Errorf("Kinds = %v, want sorted", k)
	}
	if r.Err() != nil {
		t.Errorf("Err = %v", r.Err())
	}
	r.Register("a", 3) // a second driver of one kind keeps the first
	r.Register("", 4)
	if d, _ := r.Lookup("a"); d != 1 {
		t.Errorf("a second registration replaced the first: %d", d)
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), `["a" ""]`) {
		t.Errorf("Err = %v, want the kinds registered twice or empty", err)
	}
}

func TestProblemsKeepSecrets(t *testing.T) {
	var p Problems
	for _, raw := range []string{"redis://u:pa/ss@h:6379/0", "redis://u:p%zz@h/0", "http://u:s3cret@h:99999/"} {
		p.RedisURL("url", raw)
		p.CredentialURL("url", raw, "http")
	}
	for _, e := range p.List() {
		if strings.Contains(e.Msg, "pa/ss") || strings.Contains(e.Msg, "s3cret") || strings.Contains(e.Msg, "p%zz") {
			t.Errorf("a message shows the password: %v", e)
		}
	}
	if len(p.List()) == 0 {
		t.Fatal("bad URLs passed")
	}
}
