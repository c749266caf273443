package tracker_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/tracker"
)

// BenchmarkValidateKey: every Add and every discovered link passes through
// ValidateKey, so it must stay far below the cost of a tracker call: the
// ASCII fast path measured 35 ns for a 62-byte URL (about 15 ns per rune
// of non-ASCII text).
func BenchmarkValidateKey(b *testing.B) {
	for _, c := range []struct{ name, key string }{
		{"url", "https://example.org/some/path/page-12345.html?q=a%20b&sort=asc"},
		{"id", "123456789"},
		{"non-ASCII", strings.Repeat("日本語-", 16)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.key)))
			for b.Loop() {
				if err := tracker.ValidateKey(c.key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestValidateItemLabelsAndPriority enumerates the labels and priorities
// an item may carry, and the classes refused.
func TestValidateItemLabelsAndPriority(t *testing.T) {
	many := make([]string, tracker.MaxLabels+1)
	for i := range many {
		many[i] = "l" + strings.Repeat("x", i)
	}
	for _, c := range []struct {
		name string
		item tracker.Item
		want string // "" = valid
	}{
		{"none", tracker.Item{Key: "k"}, ""},
		{"highest priority", tracker.Item{Key: "k", Priority: tracker.MaxPriority}, ""},
		{"labels", tracker.Item{Key: "k", Labels: []string{"news", "v1.2", "a_b-c", "X9"}}, ""},
		{"longest label", tracker.Item{Key: "k", Labels: []string{strings.Repeat("a", tracker.MaxLabelLen)}}, ""},
		{"most labels", tracker.Item{Key: "k", Labels: many[:tracker.MaxLabels]}, ""},
		{"negative priority", tracker.Item{Key: "k", Priority: -1}, "priority -1 outside"},
		{"priority too high", tracker.Item{Key: "k", Priority: tracker.MaxPriority + 1}, "outside 0..9"},
		{"too many labels", tracker.Item{Key: "k", Labels: many}, "17 labels"},
		{"empty label", tracker.Item{Key: "k", Labels: []string{""}}, "empty label"},
		{"label too long", tracker.Item{Key: "k", Labels: []string{strings.Repeat("a", tracker.MaxLabelLen+1)}}, "longer than"},
		{"leading dot", tracker.Item{Key: "k", Labels: []string{".a"}}, "starts with"},
		{"leading dash", tracker.Item{Key: "k", Labels: []string{"-a"}}, "starts with"},
		{"comma", tracker.Item{Key: "k", Labels: []string{"a,b"}}, `","`},
		{"space", tracker.Item{Key: "k", Labels: []string{"a b"}}, `" "`},
		{"slash", tracker.Item{Key: "k", Labels: []string{"a/b"}}, `"/"`},
		{"colon", tracker.Item{Key: "k", Labels: []string{"a:b"}}, `":"`},
		{"newline", tracker.Item{Key: "k", Labels: []string{"a\nb"}}, `"\n"`},
		{"non-ASCII", tracker.Item{Key: "k", Labels: []string{"café"}}, `"\xc3"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := tracker.ValidateItem(c.item)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && err == nil:
				t.Fatal("accepted")
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %q does not say %q", err, c.want)
			case c.want != "" && !errors.Is(err, tracker.ErrInvalidItem):
				t.Fatalf("error %q is not ErrInvalidItem", err)
			}
		})
	}
}
