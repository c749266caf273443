package login

import "github.com/andybalholm/cascadia"

// compile parses a CSS selector as goquery does.
func compile(sel string) (cascadia.Sel, error) { return cascadia.Parse(sel) }
