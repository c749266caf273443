package saver

import (
	"context"
	"sync/atomic"
)

type none struct{ closed atomic.Bool }

// None returns a saver that stores nothing, for discovery-only crawls. Its
// Flush always succeeds at once; like every saver, it refuses work after
// Close (ErrClosed).
func None() Saver { return &none{} }

func (n *none) Save(ctx context.Context, p *Page) error {
	if n.closed.Load() {
		return ErrClosed
	}
	return CheckPage(p)
}

func (n *none) Flush(context.Context) error {
	if n.closed.Load() {
		return ErrClosed
	}
	return nil
}

func (n *none) Close(context.Context) error {
	n.closed.Store(true)
	return nil
}
