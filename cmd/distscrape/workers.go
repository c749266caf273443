package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/distscrape/distscrape/manager"
	"github.com/distscrape/distscrape/tracker"
)

// statusRecord is status --json: the counters and, per worker, its record.
type statusRecord struct {
	tracker.Stats
	WorkerStats []tracker.WorkerStats `json:"worker_stats"`
	// Records is what the records: sink holds, by rule, when it can be
	// read from here.
	Records map[string]manager.RuleCount `json:"records,omitempty"`
	// RecordFields is, by rule, how many stored records have a value of
	// each field (found) and how many none (empty).
	RecordFields map[string][]fieldFound `json:"record_fields,omitempty"`
	// RecordsError says why the sink could not be read.
	RecordsError string `json:"records_error,omitempty"`
}

// printStatusJSON writes the counters and the workers as one JSON object.
func printStatusJSON(ctx context.Context, w io.Writer, tr tracker.Inspector, st tracker.Stats, recs recordsView) error {
	ws, err := tr.Workers(ctx)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if ws == nil {
		ws = []tracker.WorkerStats{}
	}
	return json.NewEncoder(w).Encode(statusRecord{Stats: st, WorkerStats: ws, Records: recs.counts, RecordFields: recs.fields, RecordsError: recs.err})
}

// printWorkers writes a row per worker: alive; dead (it missed its
// heartbeats, or without heartbeats its lease TTL passed), with the leases
// it still holds, which go back at the next heartbeat or checkout of any
// worker; or how it exited (finished, stopped).
func printWorkers(ctx context.Context, w io.Writer, tr tracker.Inspector, now time.Time) error {
	ws, err := tr.Workers(ctx)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if len(ws) == 0 {
		fmt.Fprintln(w, "no worker seen recently")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "worker\tstate\tlast seen\tleases\tchecked out\tdone\tfailed\texpired\tfirst seen")
	for _, x := range ws {
		state := x.State(now)
		if x.Dead(now) && x.Leases > 0 {
			state = fmt.Sprintf("dead (%d %s expired)", x.Leases, plural(x.Leases, "lease", "leases"))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", x.Name, state, ago(x.LastSeen, now),
			x.Leases, x.Checkouts, x.Done, x.Failed, x.Expired, x.FirstSeen.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return max(now.Sub(t), 0).Round(time.Second).String() + " ago"
}
