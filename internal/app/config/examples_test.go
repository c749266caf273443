package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExamplesPolite: the shipped configs are what users copy for their own
// site, so none asks a host for more than the documented defaults. A fleet
// example's per-host figures are the whole fleet's (Redis permits), so they
// hold it to the same bound.
func TestExamplesPolite(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "examples", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// The secrets and addresses an example takes from the
			// environment: any value of the right shape will do.
			for _, m := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(string(src), -1) {
				v := "x"
				if strings.HasSuffix(m[1], "URL") {
					v = "http://127.0.0.1:8088"
				}
				t.Setenv(m[1], v)
			}
			c, err := DecodeFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c.ApplyDefaults()
			if got := c.Fetch.PerHostConcurrency; got > DefaultPerHostConcurrency {
				t.Errorf("fetch.per_host_concurrency %d, more than the documented default %d", got, DefaultPerHostConcurrency)
			}
		})
	}
}
