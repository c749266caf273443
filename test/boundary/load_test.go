package boundary

import (
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"
)

// module is the import path of the module under test.
const module = "github.com/distscrape/distscrape"

// loaded is every package of the module, without tests, loaded once for
// all the tests of this package (type-checking the module costs seconds).
var loaded struct {
	once sync.Once
	pkgs map[string]*packages.Package
	err  error
}

// load returns the module's packages by import path, with their types and
// their whole import graph.
func load(t *testing.T) map[string]*packages.Package {
	t.Helper()
	loaded.once.Do(func() {
		cfg := &packages.Config{
			Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps | packages.NeedTypes,
			Dir:  "../..",
		}
		pkgs, err := packages.Load(cfg, module+"/...")
		if err != nil {
			loaded.err = err
			return
		}
		loaded.pkgs = make(map[string]*packages.Package, len(pkgs))
		for _, p := range pkgs {
			loaded.pkgs[p.PkgPath] = p
		}
	})
	if loaded.err != nil {
		t.Fatalf("load the module: %v", loaded.err)
	}
	var broken []string
	for path, p := range loaded.pkgs {
		for _, e := range p.Errors {
			broken = append(broken, path+": "+e.Error())
		}
	}
	if len(broken) > 0 {
		t.Fatalf("the module does not load:\n%s", strings.Join(broken, "\n"))
	}
	return loaded.pkgs
}

// rel is path relative to the module root ("tracker/memtracker"), "" for
// the root itself, and ok false for a path outside the module.
func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// isInternal reports whether path is an internal package of any module.
func isInternal(path string) bool {
	return strings.HasSuffix(path, "/internal") || strings.Contains(path, "/internal/") || strings.HasPrefix(path, "internal/")
}

// loadOne loads one package by pattern (relative to the module root), which
// may live in a testdata directory.
func loadOne(t *testing.T, pattern string) *packages.Package {
	t.Helper()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: "../.."}
	pkgs, err := packages.Load(cfg, pattern)
	if err != nil {
		t.Fatalf("load %s: %v", pattern, err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("load %s: %d packages, errors %v", pattern, len(pkgs), pkgs[0].Errors)
	}
	return pkgs[0]
}
