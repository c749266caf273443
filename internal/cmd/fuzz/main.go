// Command fuzz runs every fuzz target of the module (each `func FuzzX` in a
// _test.go file) for -fuzztime each, one after the other, and fails on the
// first real finding. `make fuzz` and the smoke run of `make test` use it.
//
// Why not a shell loop around `go test -fuzz`: with a duration -fuzztime, Go
// up to 1.26 can fail a target with a bare "context deadline exceeded" at the
// end of the window, having found nothing (a race in the fuzz coordinator,
// go.dev/issue/75804, fixed in Go 1.27). That made CI flaky. This runner
// tells that race apart from a finding: a finding writes a failing input
// under testdata/fuzz, and its message differs; the race does neither. A run
// ended by the race is then checked by replaying the target's corpus without
// fuzzing, and counts as passed only if that replay passes.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
)

func main() {
	fuzztime := flag.String("fuzztime", "30s", "passed to go test -fuzztime for each target (a duration, or Nx for N runs)")
	match := flag.String("run", "", "only targets whose name matches this regular expression")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *fuzztime, *match, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "fuzz:", err)
		os.Exit(1)
	}
}

// target is one fuzz function and the package directory that holds it.
type target struct{ dir, name string }

func run(ctx context.Context, fuzztime, match string, pkgs []string) error {
	re, err := regexp.Compile(match)
	if err != nil {
		return fmt.Errorf("-run: %w", err)
	}
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	targets, err := findTargets(ctx, pkgs)
	if err != nil {
		return err
	}
	ran := 0
	for _, t := range targets {
		if !re.MatchString(t.name) {
			continue
		}
		ran++
		fmt.Printf("== %s (%s) for %s\n", t.name, t.dir, fuzztime)
		if err := fuzzOne(ctx, t, fuzztime); err != nil {
			return fmt.Errorf("%s (%s): %w", t.name, t.dir, err)
		}
	}
	if ran == 0 {
		return fmt.Errorf("no fuzz target in %s matches %q", strings.Join(pkgs, " "), match)
	}
	return nil
}

// findTargets lists the fuzz functions of the packages, sorted, by parsing
// their test files (cheaper than compiling every test binary for -list).
func findTargets(ctx context.Context, pkgs []string) ([]target, error) {
	args := append([]string{"list", "-f", `{{.Dir}}{{range .TestGoFiles}} {{.}}{{end}}{{range .XTestGoFiles}} {{.}}{{end}}`}, pkgs...)
	out, err := exec.CommandContext(ctx, "go", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var targets []target
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		for _, file := range fields[1:] {
			names, err := fuzzFuncs(filepath.Join(fields[0], file))
			if err != nil {
				return nil, err
			}
			for _, name := range names {
				targets = append(targets, target{dir: fields[0], name: name})
			}
		}
	}
	sort.Slice(targets, func(i, j int) bool {
		if targets[i].dir != targets[j].dir {
			return targets[i].dir < targets[j].dir
		}
		return targets[i].name < targets[j].name
	})
	return targets, nil
}

// fuzzFuncs names the top-level functions FuzzX(*testing.F) of a Go file.
func fuzzFuncs(path string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") && fn.Type.Params.NumFields() == 1 {
			names = append(names, fn.Name.Name)
		}
	}
	return names, nil
}

func fuzzOne(ctx context.Context, t target, fuzztime string) error {
	corpus := filepath.Join(t.dir, "testdata", "fuzz", t.name)
	before := corpusFiles(corpus)
	var out bytes.Buffer
	err := goTest(ctx, t.dir, io.MultiWriter(os.Stdout, &out),
		"-run", "^$", "-fuzz", "^"+t.name+"$", "-fuzztime", fuzztime)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	written := newFiles(before, corpusFiles(corpus))
	if outcome(t.name, out.Bytes(), written) != coordinatorRace {
		return err
	}
	fmt.Printf("== %s: the run ended with Go's fuzz-coordinator race (go.dev/issue/75804), no input failed; replaying its corpus\n", t.name)
	if err := goTest(ctx, t.dir, os.Stdout, "-run", "^"+t.name+"$"); err != nil {
		return fmt.Errorf("corpus replay: %w", err)
	}
	return nil
}

func goTest(ctx context.Context, dir string, out io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-count=1"}, args...)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}

// result is how a failed `go test -fuzz` run ended.
type result int

const (
	finding         result = iota // an input failed, or anything unexplained
	coordinatorRace               // only the coordinator's deadline race
)

// outcome classifies the output of a failed fuzz run of target name. It is
// the race only when nothing was written to the corpus, no input is named as
// failing, nothing panicked, and the target's failure is exactly the bare
// deadline message.
func outcome(name string, output []byte, written []string) result {
	if len(written) > 0 || bytes.Contains(output, []byte("Failing input written to")) {
		return finding
	}
	var failLines []string
	sc := bufio.NewScanner(bytes.NewReader(output))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for inFail := false; sc.Scan(); {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: "):
			return finding
		case strings.HasPrefix(line, "--- FAIL: "+name+" ("):
			inFail = true
		case inFail && strings.HasPrefix(line, "    "):
			failLines = append(failLines, strings.TrimSpace(line))
		default:
			inFail = false
		}
	}
	if sc.Err() == nil && len(failLines) == 1 && failLines[0] == context.DeadlineExceeded.Error() {
		return coordinatorRace
	}
	return finding
}

func corpusFiles(dir string) map[string]bool {
	files := map[string]bool{}
	// Missing or unreadable is empty, so anything there later counts as new.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		files[e.Name()] = true
	}
	return files
}

func newFiles(before, after map[string]bool) []string {
	var added []string
	for name := range after {
		if !before[name] {
			added = append(added, name)
		}
	}
	sort.Strings(added)
	return added
}
