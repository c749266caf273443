package boundary

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const (
	goRedis = "github.com/redis/go-redis/v9"
	awsSDK  = "github.com/aws/aws-sdk-go-v2"
)

// engines are the drivers of every family (tracker engines, savers, record
// sinks, the browser): those cmd/distscrape/drivers.go links, one blank
// import each, so a new driver gets its family's rows from that one line
// (TestDriverPackagesHaveRules: none escapes it). Only commands and tests
// may link one.
var engines, enginesErr = linkedDrivers("../../cmd/distscrape/drivers.go")

// saverDrivers and sinkDrivers are the engines under saver/ and record/.
var (
	saverDrivers = under(engines, "saver/")
	sinkDrivers  = under(engines, "record/")
)

// TestImportRules checks the import rules of docs/architecture.md (section
// "Import rules") on the whole import graph (transitive, tests excluded),
// one row per rule.
func TestImportRules(t *testing.T) {
	pkgs := load(t)
	tests := []struct {
		rule string
		pkg  string
		// ok reports whether pkg may depend on dep (an import path).
		ok func(dep string) bool
	}{
		{"the drivers' registry imports nothing of distscrape but redaction", "driver", only("internal/redact")},
		{"the contract imports only the drivers' registry", "tracker", only("driver")},
		{"the contract does not pull in a Redis client", "tracker", not(goRedis)},
		{"the memory engine does not pull in a Redis client", "tracker/memtracker", not(goRedis)},
		{"the tracker suite sees the contract only", "tracker/trackertest", only("tracker", "driver")},
		{"the tracker suite does not pull in a Redis client", "tracker/trackertest", not(goRedis)},
		{"the saver contract imports only the drivers' registry", "saver", only("driver")},
		{"the saver contract does not pull in a Redis client", "saver", not(goRedis)},
		{"the saver contract does not pull in the AWS SDK", "saver", not(awsSDK)},
		{"the saver suite sees the saver contract only", "saver/savertest", only("saver", "driver")},
		{"the saver suite does not pull in a Redis client", "saver/savertest", not(goRedis)},
		{"the saver suite does not pull in the AWS SDK", "saver/savertest", not(awsSDK)},
		{"the file saver does not pull in a Redis client", "saver/filesaver", not(goRedis)},
		{"the file saver does not pull in the AWS SDK", "saver/filesaver", not(awsSDK)},
		{"the Redis saver does not pull in the AWS SDK", "saver/redissaver", not(awsSDK)},
		{"the S3 saver does not pull in a Redis client", "saver/s3saver", not(goRedis)},
		{"the names of stored pages see the contract only", "saver/internal/naming", only("saver", "driver")},
		{"the disk helpers see the contract only", "saver/internal/disk", only("saver", "driver")},
		{"the drivers' shared helpers see the contract only", "saver/internal/storekit", only("saver", "driver")},
		{"the manager sees the contracts only", "manager", only("tracker", "scraper", "saver", "fetch", "fetch/render", "record", "driver")},
		{"the rendering contract sees the HTTP client only", "fetch/render", only("fetch", "driver")},
		{"the manager links no browser", "manager", noneOf("fetch/render/chromium")},
		{"the manager does not pull in chromedp", "manager", not("github.com/chromedp/chromedp")},
		{"the record contract imports only the drivers' registry", "record", only("driver")},
		{"extract sees the saver and record contracts only", "extract", only("saver", "record", "driver")},
		{"the manager links no extractor", "manager", not(module + "/extract")},
		{"the manager links no record sink", "manager", notUnder("record")},
		{"the manager pulls in no saver driver", "manager", noneOf(saverDrivers...)},
		{"the manager does not pull in a Redis client", "manager", not(goRedis)},
		{"the manager does not pull in the AWS SDK", "manager", not(awsSDK)},
		{"a scraper sees items and responses only", "scraper", only("tracker", "fetch", "driver")},
		{"the link table (scraper and converter) imports nothing of distscrape", "internal/linkattr", outsideModule},
		{"the scraper suite sees the contracts it tests only", "scraper/scrapertest", only("scraper", "tracker", "fetch", "driver")},
		{"the HTTP client imports no other distscrape package", "fetch", only()},
		{"the dashboard links no driver", "internal/app/dashboard", noneOf(engines...)},
		{"the config links no driver: drivers register themselves", "internal/app/config", noneOf(engines...)},
		{"the notifier links no driver", "internal/app/notify", noneOf(engines...)},
		{"the browser driver imports its contract and the client only", "fetch/render/chromium", only("fetch/render", "fetch", "driver", "internal/...")},
	}
	type row = struct {
		rule string
		pkg  string
		ok   func(dep string) bool
	}
	for _, d := range sinkDrivers {
		tests = append(tests, row{"a record sink imports its contract and the sinks' codec only", d,
			only("record", "driver", "internal/recordcodec", "internal/redact")})
	}
	for _, d := range saverDrivers {
		tests = append(tests, row{"a saver imports its contract and its helpers only", d, only("saver", "driver", "saver/internal/...")})
	}
	for _, d := range under(engines, "tracker/") {
		tests = append(tests, row{"an engine imports its contract only", d, only("tracker", "driver")})
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

// TestOnlyCommandsChooseEngines: a driver of any family (engines) is
// imported only by a command (package main), another package under test/
// (or bench/, a module of its own), or itself: the config knows the
// drivers a command links from their registries.
func TestOnlyCommandsChooseEngines(t *testing.T) {
	for path, p := range load(t) {
		r, _ := rel(path)
		if p.Name == "main" || strings.HasPrefix(r, "test/") || strings.HasPrefix(r, "bench/") || slices.Contains(engines, r) {
			continue
		}
		for imp := range p.Imports {
			if ir, _ := rel(imp); slices.Contains(engines, ir) {
				t.Errorf("%s imports the implementation %s: only cmd/ chooses implementations", r, ir)
			}
		}
	}
}

// TestDriverPackagesHaveRules: every package under saver/, record/,
// tracker/ and fetch/render/ is the contract, its suite, a helper under
// its internal/, or a driver cmd/distscrape/drivers.go links (engines), so
// a new driver cannot escape the rules above.
func TestDriverPackagesHaveRules(t *testing.T) {
	families := map[string]string{"saver/": "savertest", "record/": "recordtest", "tracker/": "trackertest", "fetch/render/": ""}
	found := 0
	for path := range load(t) {
		r, _ := rel(path)
		for prefix, suite := range families {
			if !strings.HasPrefix(r, prefix) || r == prefix+suite || strings.HasPrefix(r, prefix+"internal/") {
				continue
			}
			if !slices.Contains(engines, r) {
				t.Errorf("%s: a package under %s that is no contract, suite, helper or linked driver: link it in cmd/distscrape/drivers.go", r, prefix)
			}
			found++
		}
	}
	if found != len(engines) {
		t.Errorf("found %d of the %d drivers linked", found, len(engines))
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

// noneOf forbids the given packages of the module.
func noneOf(forbidden ...string) func(string) bool {
	return func(dep string) bool {
		r, in := rel(dep)
		return !in || !slices.Contains(forbidden, r)
	}
}

// only allows the given packages of the module ("dir/..." for every package
// under dir) and its internal helpers, except internal/app/config, the
// program's config, which no library package depends on.
func only(allowed ...string) func(string) bool {
	return func(dep string) bool {
		r, in := rel(dep)
		if !in || slices.Contains(allowed, r) || (strings.HasPrefix(r, "internal/") && r != "internal/app/config") {
			return true
		}
		for _, a := range allowed {
			if dir, ok := strings.CutSuffix(a, "/..."); ok && strings.HasPrefix(r, dir+"/") {
				return true
			}
		}
		return false
	}
}
