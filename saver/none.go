package saver

import "context"

type none struct{}

// None returns a saver that stores nothing, for discovery-only crawls. Its
// Flush always succeeds at once.
func None() Saver { return none{} }

func (none) Save(ctx context.Context, p *Page) error { return checkPage(p) }
func (none) Flush(context.Context) error             { return nil }
func (none) Close(context.Context) error             { return nil }
