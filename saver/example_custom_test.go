package saver_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/distscrape/distscrape/saver"
)

// memSaver is a saver of one's own: it keeps bodies by item key (so saving
// an item twice leaves one copy) and makes them visible only on Flush.
type memSaver struct {
	mu      sync.Mutex
	pending map[string][]byte
	durable map[string][]byte
}

func (s *memSaver) Save(_ context.Context, p *saver.Page) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[p.Key] = p.Body
	return nil
}

// Flush is the promise the manager relies on: once it returns nil, every
// page saved before it survives a crash (a real saver syncs to disk here).
func (s *memSaver) Flush(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.Copy(s.durable, s.pending)
	clear(s.pending)
	return nil
}

func (s *memSaver) Close(ctx context.Context) error { return s.Flush(ctx) }

// A custom saver implements Save, Flush and Close; its test runs
// savertest.Run on it with an independent reader of its store.
func ExampleSaver() {
	var s saver.Saver = &memSaver{pending: map[string][]byte{}, durable: map[string][]byte{}}
	ctx := context.Background()
	for _, key := range []string{"https://example.org/", "https://example.org/a", "https://example.org/"} {
		if err := s.Save(ctx, &saver.Page{Key: key, URL: key, Status: 200, Body: []byte("<html>" + key + "</html>")}); err != nil {
			panic(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		panic(err)
	}
	fmt.Println(slices.Sorted(maps.Keys(s.(*memSaver).durable)))
	// Output: [https://example.org/ https://example.org/a]
}
