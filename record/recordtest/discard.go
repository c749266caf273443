package recordtest

import (
	"context"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/record"
)

// Discard tests a file sink's record.Discarder: the queued records of the
// keys given back are dropped (every rule, emptied pages too) and the
// others written; what a Flush already wrote stays.
func Discard(t *testing.T, st *Store) {
	ctx := context.Background()
	s := open(t, st, Options(0))
	d, ok := s.(record.Discarder)
	if !ok {
		t.Fatalf("the sink %T is no record.Discarder", s)
	}
	put(t, ctx, s, NewSet("k0", "product", 2, 1))
	flush(t, ctx, s)
	for _, k := range []string{"k1", "k2", "k3", "k2"} {
		put(t, ctx, s, NewSet(k, "product", 2, 1))
	}
	put(t, ctx, s, record.Set{Key: "k2", Rule: "article"}) // an empty Set: a deleted row
	d.Discard([]string{"k2", "k0"})
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, set := range readAll(t, ctx, st, Crawl) {
		keys = append(keys, set.Key)
	}
	if strings.Join(keys, ",") != "k0,k1,k3" {
		t.Errorf("keys stored %v, want k0 (written before), k1, k3", keys)
	}
}
