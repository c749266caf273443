package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/tracker"
)

// printSummary writes the end of a crawl or worker run: what this worker
// did, the tracker's counts, where the output went, and what needs a look
// (dead letters, fields never found, seeds that failed their rules).
func printSummary(w io.Writer, cfg *config.Config, worker string, s manager.Summary, st tracker.Stats, stErr error, state, dead string, live int, never []string) {
	rate := 0.0
	if s.Elapsed > 0 {
		rate = float64(s.Saved) / s.Elapsed.Seconds()
	}
	fmt.Fprintf(w, "\n%s: %s (worker %s)\n", cfg.Crawl, state, worker)
	fmt.Fprintf(w, "  pages saved   %d (%s fetched) in %s, %.1f pages/s\n", s.Saved, humanBytes(s.Bytes), s.Elapsed.Round(time.Millisecond), rate)
	if s.Unchanged > 0 {
		fmt.Fprintf(w, "  unchanged     %d revisits answered 304 Not Modified (counted as saved; no new version)\n", s.Unchanged)
	}
	fmt.Fprintf(w, "  failures      %d reported by this worker (retryable or final), %d leases lost\n", s.Failed, s.LeaseLost)
	if stErr == nil {
		fmt.Fprintf(w, "  tracker       %d done, %d failed, %d pending, %d leased, %d delayed\n", st.Done, st.Failed, st.Pending, st.Leased, st.Delayed)
	} else {
		fmt.Fprintf(w, "  tracker       stats unavailable: %v\n", redactor.Error(stErr))
	}
	fmt.Fprintf(w, "  output        %s\n", outputLocation(cfg, worker))
	if r := recordsLine(s.Records); r != "" {
		fmt.Fprintf(w, "  %s, into %s\n", r, recordsLocation(cfg.Records))
	}
	if dead != "" {
		fmt.Fprintf(w, "  dead letters  %s\n", dead)
	}
	if len(never) > 0 {
		fmt.Fprintf(w, "  never found   %s (this worker's pages)\n", strings.Join(never, "; "))
	}
	for _, f := range s.InvalidSeeds {
		fmt.Fprintf(w, "  seed failed   %s: %s\n", f.Key, f.Reason)
	}
	if live > 0 {
		fmt.Fprintf(w, "  requisites    %d left on the live site (on hosts out of scope: add them to scraper.scope.hosts to mirror them)\n", live)
	}
}

func outputLocation(cfg *config.Config, worker string) string {
	return cfg.Saver.Driver.Location(cfg.SaverEnv(worker))
}

// recordsLocation says where records.kind writes, never its password.
func recordsLocation(r config.Records) string {
	if r.Driver == nil {
		return ""
	}
	return r.Driver.Location(redactor.URL)
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
