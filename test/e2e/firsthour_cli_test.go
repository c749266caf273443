package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// Issue 14, "the first hour as a user": the command line.

// oneLine checks a usage error: exit 2, nothing on stdout (no help dump),
// one line on stderr holding every want.
func oneLine(t *testing.T, r testbin.Result, want ...string) {
	t.Helper()
	if r.Code != 2 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 {
		t.Fatalf("want exit 2, no stdout, one line on stderr:\n%s", r)
	}
	for _, w := range want {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("stderr lacks %q: %s", w, r.Stderr)
		}
	}
}

// TestUsageErrorsOneLine: unknown flags (every spelling, on any command,
// a config key given as a flag), mistyped commands and bad flag values.
func TestUsageErrorsOneLine(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"crawl", "--concurrency", "4"}, []string{"unknown flag --concurrency", "fetch.concurrency", "DISTSCRAPE_FETCH_CONCURRENCY"}},
		{[]string{"crawl", "--concurrency=4"}, []string{"unknown flag --concurrency", "fetch.concurrency"}},
		{[]string{"crawl", "-concurrency", "4"}, []string{"unknown flag --concurrency", "fetch.concurrency"}},
		{[]string{"worker", "--max-depth", "2"}, []string{"worker: unknown flag --max-depth", "scraper.scope.max_depth"}},
		{[]string{"worker", "--lease-ttl", "1m"}, []string{"tracker.lease_ttl"}},
		{[]string{"status", "--jsn"}, []string{"status: unknown flag --jsn", "did you mean --json?"}},
		{[]string{"seed", "--rnage", "1-2"}, []string{"did you mean --range?"}},
		{[]string{"requeue", "--faild"}, []string{"did you mean --failed?"}},
		{[]string{"crawl", "--frobnicate"}, []string{"crawl: unknown flag --frobnicate", "distscrape crawl --help"}},
		{[]string{"--verison"}, []string{"unknown flag --verison", "did you mean --version?"}},
		{[]string{"status", "--interval", "soon"}, []string{"status:", "soon", "distscrape status --help"}},
		{[]string{"seed", "https://example.org/", "-c", "crawl.yaml"}, []string{`"-c" after an item: flags go first`}},
		{[]string{"crawwl"}, []string{`unknown command "crawwl"`, "did you mean crawl?"}},
		{[]string{"statsu"}, []string{"did you mean status?"}},
		{[]string{"requeu"}, []string{"did you mean requeue?"}},
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate"`, "distscrape --help"}},
	}
	cmd := testbin.Cmd{Dir: t.TempDir()}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			oneLine(t, cmd.Run(t, time.Minute, tc.args...), tc.want...)
		})
	}
	r := cmd.Run(t, time.Minute, "frobnicate")
	if strings.Contains(r.Stderr, "did you mean") {
		t.Errorf("a did-you-mean for a word like no command: %s", r.Stderr)
	}
}

// TestConfigFileUnreadable: every command that reads a config says what is
// wrong with the file in one line, exit 2, however the path is given.
func TestConfigFileUnreadable(t *testing.T) {
	dir := t.TempDir()
	commands := [][]string{{"crawl"}, {"worker"}, {"seed"}, {"status"}, {"failed"}, {"requeue"}, {"reset", "--yes"}, {"check"}}
	files := []struct{ path, want string }{
		{"nope.yaml", "distscrape: config file nope.yaml: not found\n"},
		{filepath.Join(dir, "missing", "c.yaml"), "distscrape: config file " + filepath.Join(dir, "missing", "c.yaml") + ": not found\n"},
		{dir, "distscrape: config file " + dir + ": is a directory, not a file\n"},
	}
	cmd := testbin.Cmd{Dir: dir}
	for _, c := range commands {
		for _, f := range files {
			t.Run(c[0]+" "+f.path, func(t *testing.T) {
				if r := cmd.Run(t, time.Minute, append(c, "-c", f.path)...); r.Code != 2 || r.Stderr != f.want {
					t.Errorf("-c: want exit 2 and %q\n%s", f.want, r)
				}
				env := testbin.Cmd{Dir: dir, Env: []string{"DISTSCRAPE_CONFIG=" + f.path}}
				if r := env.Run(t, time.Minute, c...); r.Code != 2 || r.Stderr != f.want {
					t.Errorf("DISTSCRAPE_CONFIG: want exit 2 and %q\n%s", f.want, r)
				}
			})
		}
	}
}

// TestVersionFromBuildInfo: version and --version say the module version
// from the build info ("(devel)" for a build in a clone), not "dev".
func TestVersionFromBuildInfo(t *testing.T) {
	cmd := testbin.Cmd{Dir: t.TempDir()}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := cmd.Run(t, time.Minute, args...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "distscrape") || !strings.Contains(r.Stdout, " (devel) (") {
			t.Errorf("%v: %s", args, r)
		}
	}
}

// TestSystemdUnit: the worker unit restarts on failure only, stops with
// SIGTERM and waits longer than the manager's 30 s grace, and its command
// line is one the binary accepts.
func TestSystemdUnit(t *testing.T) {
	f, err := os.Open(filepath.Join(testbin.Root(t), "examples", "distscrape-worker@.service"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unit := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && !strings.HasPrefix(k, "#") {
			unit[k] = v
		}
	}
	for k, want := range map[string]string{"Restart": "on-failure", "KillSignal": "SIGTERM", "RestartPreventExitStatus": "2", "SuccessExitStatus": "3 143"} {
		if unit[k] != want {
			t.Errorf("%s=%q, want %q", k, unit[k], want)
		}
	}
	if d, err := time.ParseDuration(unit["TimeoutStopSec"]); err != nil || d <= 30*time.Second {
		t.Errorf("TimeoutStopSec=%q: want more than the 30 s grace", unit["TimeoutStopSec"])
	}
	args := strings.Fields(strings.NewReplacer("%H", "host", "%i", "1").Replace(unit["ExecStart"]))
	if len(args) < 2 || filepath.Base(args[0]) != "distscrape" || args[1] != "worker" {
		t.Fatalf("ExecStart=%q", unit["ExecStart"])
	}
	for i, a := range args {
		if a == "-c" && i+1 < len(args) {
			args[i+1] = filepath.Join(t.TempDir(), "fleet.yaml") // never a real config of this machine
		}
	}
	r := testbin.Cmd{Dir: t.TempDir()}.Run(t, time.Minute, args[1:]...)
	if r.Code != 2 || !strings.Contains(r.Stderr, "fleet.yaml: not found") {
		t.Errorf("the unit's command line, run with a missing config: %s", r)
	}
}

// TestExamplesRunAsWritten: the README's examples need no environment
// variable; they point at the fixture site's default address; and they
// crawl it (here on a free port, as make demo does, by overriding the seed).
func TestExamplesRunAsWritten(t *testing.T) {
	root := testbin.Root(t)
	main, err := os.ReadFile(filepath.Join(root, "test", "fixturesite", "cmd", "fixturesite", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	const defaultAddr = "127.0.0.1:8088"
	if !strings.Contains(string(main), `flag.String("addr", "`+defaultAddr+`"`) {
		t.Fatalf("the fixture site's default address is no longer %s: update the examples and the README", defaultAddr)
	}
	site := fixturesite.Start(t, fixturesite.Options{Pages: 50, IDs: 40})
	cases := []struct {
		example, override string
		wantSaved         int
		wantRecords       string // in the summary, for the scraping examples
	}{
		{"mirror.yaml", "DISTSCRAPE_SCRAPER_SEEDS=" + site.URL() + "/", len(site.Pages()), ""},
		{"ids.yaml", "DISTSCRAPE_SCRAPER_DOWNLOAD_URL_FMT=" + site.ItemURLFormat(), len(site.ExpectedIDs()), ""},
		// The scraping examples: the pages whose records were written.
		{"shop.yaml", "DISTSCRAPE_SCRAPER_SEEDS=" + site.URL() + fixturesite.ShopPath, site.ShopPages() + len(site.ProductURLs()),
			fmt.Sprintf("records: listing %d, product %d ", len(site.Products()), len(site.ProductURLs()))},
		{"api.yaml", "DISTSCRAPE_SCRAPER_SEEDS=" + site.URL() + fixturesite.APIPagePath(1), site.APIPages(), fmt.Sprintf("records: item %d,", len(site.APIItems()))},
		{"api-ids.yaml", "DISTSCRAPE_SCRAPER_DOWNLOAD_URL_FMT=" + site.URL() + fixturesite.APIItemPath + "#{id}", len(site.APIItems()), fmt.Sprintf("records: item %d,", len(site.APIItems()))},
	}
	for _, tc := range cases {
		t.Run(tc.example, func(t *testing.T) {
			path := filepath.Join(root, "examples", tc.example)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(src), "http://"+defaultAddr+"/") || strings.Contains(string(src), "${") {
				t.Errorf("%s: want the fixture site's %s and no ${VAR}", tc.example, defaultAddr)
			}
			dir := t.TempDir()
			if r := (testbin.Cmd{Dir: dir}).Run(t, time.Minute, "check", "-c", path); r.Code != 0 || !strings.Contains(r.Stdout, "config ok") {
				t.Fatalf("check as written: %s", r)
			}
			r := testbin.Cmd{Dir: dir, Env: []string{tc.override}}.Run(t, runTimeout, "crawl", "-c", path, "--id", "w")
			code := 0 // exitDeadLetters when the summary says pages were lost
			if strings.Contains(r.Stdout, "LOST to dead letters") {
				code = exitDeadLetters
			}
			if want := fmt.Sprintf("pages saved   %d ", tc.wantSaved); r.Code != code || !strings.Contains(r.Stdout, want) {
				t.Fatalf("crawl: want %q\n%s", want, r)
			}
			if !strings.Contains(r.Stdout, tc.wantRecords) {
				t.Errorf("crawl: want %q in the summary\n%s", tc.wantRecords, r)
			}
			if _, err := os.Stat(filepath.Join(dir, "out")); err != nil {
				t.Errorf("the output is not in out/: %v", err)
			}
		})
	}
}
