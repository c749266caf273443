package e2e

import (
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distscrape/distscrape/test/testbin"
)

// A worker killed mid-crawl is shown dead by status --workers once its
// lease TTL has passed, with the leases it still holds expired; after
// requeue --worker it holds none.
func TestStatusWorkersShowsDead(t *testing.T) {
	_, cmd, cfg, _ := slowFleetCrawl(t, "2s")
	victim := startMidCrawl(t, cmd, cfg, "victim")
	if r := cmd.Run(t, time.Minute, "status", "-c", cfg, "--workers"); r.Code != 0 || !regexp.MustCompile(`(?m)^victim +alive `).MatchString(r.Stdout) {
		t.Fatalf("status --workers with the victim working: %s", r)
	}
	victim.Signal(syscall.SIGKILL)
	<-victim.Done()
	dead := regexp.MustCompile(`(?m)^victim +dead \((\d+) leases? expired\)`)
	var out string
	testbin.WaitFor(t, time.Minute, "the killed worker to be shown dead", func() bool {
		r := cmd.Run(t, time.Minute, "status", "-c", cfg, "--workers")
		out = r.Stdout
		return dead.MatchString(out)
	})
	if m := dead.FindStringSubmatch(out); m[1] == "0" {
		t.Fatalf("the victim died holding no lease; the test proves less:\n%s", out)
	}
	if r := cmd.Run(t, time.Minute, "requeue", "-c", cfg, "--worker", "victim"); r.Code != 0 {
		t.Fatalf("requeue --worker: %s", r)
	}
	r := cmd.Run(t, time.Minute, "status", "-c", cfg, "--workers")
	if !regexp.MustCompile(`(?m)^victim +dead +`).MatchString(r.Stdout) || strings.Contains(r.Stdout, "expired)") {
		t.Fatalf("after requeue --worker, the victim still holds leases:\n%s", r.Stdout)
	}
}
