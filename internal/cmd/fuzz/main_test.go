package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		name    string
		output  string
		written []string
		want    result
	}{
		{"the coordinator race, as CI printed it", `fuzz: elapsed: 21s, execs: 169829 (0/sec), new interesting: 31 (total: 266)
--- FAIL: FuzzFilePath (21.04s)
    context deadline exceeded
FAIL
exit status 1
FAIL	github.com/distscrape/distscrape/saver	21.079s
`, nil, coordinatorRace},
		{"a failing input", `--- FAIL: FuzzFilePath (0.31s)
    --- FAIL: FuzzFilePath (0.00s)
        fuzz_test.go:47: maps outside the directory

    Failing input written to testdata/fuzz/FuzzFilePath/1f2e
    To re-run:
    go test -run=FuzzFilePath/1f2e
FAIL
`, []string{"1f2e"}, finding},
		{"a new corpus file without the message", "--- FAIL: FuzzX (20.00s)\n    context deadline exceeded\n", []string{"abc"}, finding},
		{"the deadline beside another error", "--- FAIL: FuzzX (20.00s)\n    fuzzing process hung or terminated unexpectedly\n    context deadline exceeded\n", nil, finding},
		{"the deadline of another target", "--- FAIL: FuzzY (20.00s)\n    context deadline exceeded\n", nil, finding},
		{"the deadline after a panic", "panic: runtime error: index out of range\n--- FAIL: FuzzX (20.00s)\n    context deadline exceeded\n", nil, finding},
		{"a line too long to read", "--- FAIL: FuzzX (20.00s)\n    context deadline exceeded\n" + strings.Repeat("x", 5<<20) + "\n", nil, finding},
		{"a build failure", "# pkg\n./x_test.go:3:1: syntax error\nFAIL\tpkg [build failed]\n", nil, finding},
		{"no output", "", nil, finding},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "FuzzX"
			if strings.Contains(tc.output, "FuzzFilePath") {
				name = "FuzzFilePath"
			}
			if got := outcome(name, []byte(tc.output), tc.written); got != tc.want {
				t.Fatalf("outcome = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRunFindsAndPasses runs the real `go test -fuzz` on a throwaway module:
// a target that fails on some input must fail the run (and name it), a sound
// one must pass, and a -run that matches nothing is an error, not a pass.
func TestRunFindsAndPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and fuzzes a module")
	}
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/fz\n\ngo 1.22\n")
	write("fz_test.go", `package fz

import "testing"

func FuzzSound(f *testing.F) {
	f.Add(1)
	f.Fuzz(func(t *testing.T, n int) { _ = n * 2 })
}

func FuzzBroken(f *testing.F) {
	f.Add("ok")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 2 { // any mutation that lengthens the seed
			t.Fatalf("found %q", s)
		}
	})
}
`)
	// Not a target: text that only looks like one.
	write("fake_test.go", "package fz\n\nvar fake = `\nfunc FuzzInAString(f *testing.F) {}\n`\n")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t.Chdir(dir)
	targets, err := findTargets(ctx, []string{"./..."})
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 2 || targets[0].name != "FuzzBroken" || targets[1].name != "FuzzSound" {
		t.Fatalf("targets = %+v, want FuzzBroken and FuzzSound", targets)
	}
	if err := run(ctx, "200x", "^FuzzSound$", nil); err != nil {
		t.Fatalf("sound target: %v", err)
	}
	err = run(ctx, "100000x", "^FuzzBroken$", nil)
	if err == nil || !strings.Contains(err.Error(), "FuzzBroken") {
		t.Fatalf("broken target: err = %v, want a failure naming FuzzBroken", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "testdata", "fuzz", "FuzzBroken")); len(entries) == 0 {
		t.Fatal("the failing input was not written to the corpus")
	}
	if err := run(ctx, "1x", "^FuzzNone$", nil); err == nil || !strings.Contains(err.Error(), "no fuzz target") {
		t.Fatalf("no match: err = %v, want an error", err)
	}
}
