package boundary

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// architecture is the page whose folder map and cited files this file
// checks against the tree.
const architecture = "../../docs/architecture.md"

// folderMap reads the first code block of docs/architecture.md, the folder
// map: each line names folders (words ending in /) at its indentation, two
// spaces a level below the line above it; a line indented further without
// such words continues the description. A word *NAME/ stands for every
// folder at its level whose name ends in NAME (*saver/: the savers, so a
// new driver needs no line of its own).
func folderMap(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(architecture)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/architecture.md has no code block: where is the folder map?")
	}
	out := map[string]bool{}
	var parents []string // the folder at each level of the line above
	for _, line := range strings.Split(block, "\n") {
		words := strings.Fields(line)
		if len(words) == 0 || !strings.HasSuffix(words[0], "/") {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if indent%2 != 0 || indent/2 > len(parents) {
			t.Fatalf("folder map: %q is not indented two spaces a level", line)
		}
		level := indent / 2
		parents = parents[:level]
		var last string
		for _, w := range words {
			if !strings.HasSuffix(w, "/") {
				break
			}
			last = strings.TrimSuffix(w, "/")
			out[strings.Join(append(parents[:level:level], last), "/")] = true
		}
		parents = append(parents, last) // the folder a deeper line is in
	}
	return out
}

// TestArchitectureFolderMap: docs/architecture.md's folder map names every
// folder that holds a package of the module, and only folders that exist.
func TestArchitectureFolderMap(t *testing.T) {
	listed := folderMap(t)
	if len(listed) < 10 {
		t.Fatalf("folder map: %d folders read; the parser is broken: %v", len(listed), listed)
	}
	for dir := range listed {
		if m, _ := filepath.Glob(filepath.Join("../..", dir)); len(m) == 0 {
			t.Errorf("the folder map names %s/, which is no folder of the repository", dir)
		}
	}
	for path := range load(t) {
		dir := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if dir != "" && !listed[dir] && !matchesPattern(listed, dir) {
			t.Errorf("package %s is in no line of docs/architecture.md's folder map", path)
		}
	}
}

// matchesPattern reports whether dir is a folder a *NAME/ word of the map
// stands for.
func matchesPattern(listed map[string]bool, dir string) bool {
	for l := range listed {
		if ok, _ := filepath.Match(l, dir); ok && strings.Contains(l, "*") {
			return true
		}
	}
	return false
}

// citedFile is a file named in backquotes with its folder: `tracker/hosts.go`.
var citedFile = regexp.MustCompile("`([a-z0-9_./-]+/[a-z0-9_.-]+\\.(?:go|lua|md|sh|yaml))`")

// TestArchitectureCitesFiles: every file docs/architecture.md names with
// its folder exists, from the repository's root or from one of the
// folders the map names (lua/lib/hosts.lua in tracker/redistracker).
func TestArchitectureCitesFiles(t *testing.T) {
	b, err := os.ReadFile(architecture)
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{""}
	for dir := range folderMap(t) {
		dirs = append(dirs, dir)
	}
	cited := citedFile.FindAllStringSubmatch(string(b), -1)
	if len(cited) < 5 {
		t.Fatalf("%d files cited: the pattern is broken", len(cited))
	}
	for _, m := range cited {
		found := false
		for _, dir := range dirs {
			if _, err := os.Stat(filepath.Join("../..", dir, m[1])); err == nil {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("docs/architecture.md cites %s, which is in no folder of the repository", m[1])
		}
	}
}
