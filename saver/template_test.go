package saver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver"
)

func TestValidateTemplate(t *testing.T) {
	for _, c := range []struct {
		tmpl string
		want string // "" = valid
	}{
		{"{crawl}:page:{id}", ""},
		{"{crawl}/{sha256}", ""},
		{"{host}/{path}", ""},
		{"{worker}-{crawl}.tar.gz", ""},
		{"{{tag}}:{id}", ""},
		{"", "empty template"},
		{"{crawl}:{url}", "unknown placeholder {url}"},
		{"{ID}", "unknown placeholder {ID}"},
		{"{id", "unclosed {"},
		{"id}", "unmatched }"},
		{"a\nb{id}", "control character"},
	} {
		err := saver.ValidateTemplate("saver.key", c.tmpl)
		if c.want == "" {
			if err != nil {
				t.Errorf("ValidateTemplate(%q) = %v, want nil", c.tmpl, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "saver.key: ") {
			t.Errorf("ValidateTemplate(%q) = %v, want an error naming saver.key and containing %q", c.tmpl, err, c.want)
		}
		if !errors.Is(err, saver.ErrBadTemplate) {
			t.Errorf("ValidateTemplate(%q): %v is not ErrBadTemplate", c.tmpl, err)
		}
	}
}

func TestNone(t *testing.T) {
	s := saver.None()
	ctx := t.Context()
	if err := s.Save(ctx, &saver.Page{Key: "k", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, nil); !errors.Is(err, saver.ErrInvalidPage) {
		t.Fatalf("Save(nil) = %v, want ErrInvalidPage", err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRecordsUnchanged: None records no 304, so the manager hands it none.
func TestRecordsUnchanged(t *testing.T) {
	if saver.RecordsUnchanged(saver.None()) {
		t.Error("RecordsUnchanged(None()) = true, want false")
	}
}
