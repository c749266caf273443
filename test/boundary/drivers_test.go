package boundary

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// linkedDrivers lists the packages of the module a file imports for their
// side effect only (import _ "..."), relative to the module, sorted.
func linkedDrivers(file string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if r, in := rel(path); in && imp.Name != nil && imp.Name.Name == "_" {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out, nil
}

// under is the packages of list under dir.
func under(list []string, dir string) []string {
	var out []string
	for _, p := range list {
		if strings.HasPrefix(p, dir) {
			out = append(out, p)
		}
	}
	return out
}

var registerRE = regexp.MustCompile(`\b(saver|record|tracker)\.Register\(|\brender\.RegisterBrowser\(`)

// TestDriversLinked: the command links drivers with one blank import each
// in cmd/distscrape/drivers.go (TestDriverPackagesHaveRules: every driver
// package), and each registers itself from its own package.
func TestDriversLinked(t *testing.T) {
	if enginesErr != nil || len(engines) == 0 {
		t.Fatalf("cmd/distscrape/drivers.go: %v, %d drivers", enginesErr, len(engines))
	}
	for _, d := range engines {
		files, _ := filepath.Glob(filepath.Join("../..", d, "*.go"))
		registers := false
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			registers = registers || registerRE.Match(b)
		}
		if !registers {
			t.Errorf("%s registers no driver (saver.Register, record.Register, tracker.Register or render.RegisterBrowser in an init)", d)
		}
	}
}
