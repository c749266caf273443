package boundary

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const goRedis = "github.com/redis/go-redis/v9"

// engines are the tracker implementations: only commands and
// internal/config may choose one.
var engines = []string{"tracker/memtracker", "tracker/redistracker"}

// TestImportRules checks the import rules of DESIGN.md on the whole import
// graph (transitive, tests excluded), one row per rule.
func TestImportRules(t *testing.T) {
	pkgs := load(t)
	tests := []struct {
		rule string
		pkg  string
		// ok reports whether pkg may depend on dep (an import path).
		ok func(dep string) bool
	}{
		{"the contract imports nothing of distscrape", "tracker", outsideModule},
		{"the contract does not pull in a Redis client", "tracker", not(goRedis)},
		{"the memory engine imports the contract only", "tracker/memtracker", only("tracker")},
		{"the memory engine does not pull in a Redis client", "tracker/memtracker", not(goRedis)},
		{"the Redis engine imports the contract only", "tracker/redistracker", only("tracker")},
		{"the tracker suite sees the contract only", "tracker/trackertest", only("tracker")},
		{"the tracker suite does not pull in a Redis client", "tracker/trackertest", not(goRedis)},
		{"the saver suite sees the saver package only", "saver/savertest", only("saver")},
		{"the manager sees the contracts only", "manager", only("tracker", "scraper", "saver", "fetch", "record")},
		{"the record contract imports nothing of distscrape", "record", outsideModule},
		{"extract sees the saver and record contracts only", "extract", only("saver", "record")},
		{"the manager links no extractor", "manager", not(module + "/extract")},
		{"the manager links no record sink", "manager", notUnder("record")},
		{"the manager links no saver driver", "manager", notUnder("saver")},
		{"a scraper sees items and responses only", "scraper", only("tracker", "fetch")},
		{"the scraper suite sees the contracts it tests only", "scraper/scrapertest", only("scraper", "tracker", "fetch")},
		{"a saver sees pages only", "saver", only()},
		{"the HTTP client imports no other distscrape package", "fetch", only()},
	}
	for _, tt := range tests {
		t.Run(tt.pkg+": "+tt.rule, func(t *testing.T) {
			p, ok := pkgs[module+"/"+tt.pkg]
			if !ok {
				t.Fatalf("package %s not found", tt.pkg)
			}
			for _, dep := range deps(p) {
				if !tt.ok(dep) {
					t.Errorf("%s depends on %s", tt.pkg, dep)
				}
			}
		})
	}
}

// TestOnlyCommandsChooseEngines: an engine is imported only by a command
// (package main), internal/config, another package under test/, or itself.
func TestOnlyCommandsChooseEngines(t *testing.T) {
	for path, p := range load(t) {
		r, _ := rel(path)
		if p.Name == "main" || r == "internal/config" || strings.HasPrefix(r, "test/") || slices.Contains(engines, r) {
			continue
		}
		for imp := range p.Imports {
			if ir, _ := rel(imp); slices.Contains(engines, ir) {
				t.Errorf("%s imports the engine %s: only cmd/ and internal/config choose implementations", r, ir)
			}
		}
	}
}

// deps is every package p depends on, directly or not, sorted.
func deps(p *packages.Package) []string {
	seen := map[string]bool{}
	var walk func(*packages.Package)
	walk = func(p *packages.Package) {
		for path, d := range p.Imports {
			if !seen[path] {
				seen[path] = true
				walk(d)
			}
		}
	}
	walk(p)
	out := make([]string, 0, len(seen))
	for path := range seen {
		out = append(out, path)
	}
	slices.Sort(out)
	return out
}

func outsideModule(dep string) bool {
	_, in := rel(dep)
	return !in
}

func not(forbidden string) func(string) bool {
	return func(dep string) bool { return dep != forbidden && !strings.HasPrefix(dep, forbidden+"/") }
}

// notUnder refuses the packages below dir of the module (dir itself, a
// contract, stays allowed): its drivers.
func notUnder(dir string) func(string) bool {
	return func(dep string) bool {
		r, in := rel(dep)
		return !in || !strings.HasPrefix(r, dir+"/")
	}
}

// only allows the given packages of the module and its internal helpers,
// except internal/config, which chooses implementations.
func only(allowed ...string) func(string) bool {
	return func(dep string) bool {
		r, in := rel(dep)
		return !in || slices.Contains(allowed, r) || (strings.HasPrefix(r, "internal/") && r != "internal/config")
	}
}
