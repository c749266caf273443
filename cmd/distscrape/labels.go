package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/tracker"
)

// labelFlag is --label of status, failed and requeue: one label to filter by.
func labelFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "label", Aliases: []string{"l"}, Usage: usage}
}

// labelOf is --label, checked by the trackers' rule ("" when not given).
func labelOf(c *cli.Context) (string, error) {
	if !c.IsSet("label") {
		return "", nil
	}
	l := c.String("label")
	if err := tracker.ValidateLabel(l); err != nil {
		return "", usagef("--label: %w", err)
	}
	return l, nil
}

// labelStatus prints the counts of the items labelled label.
func labelStatus(ctx context.Context, w io.Writer, tr tracker.Engine, label string, asJSON bool) error {
	st, err := tr.LabelStats(ctx, label)
	if err != nil {
		return fmt.Errorf("status --label %s: %w", label, err)
	}
	if asJSON {
		return json.NewEncoder(w).Encode(struct {
			Label string `json:"label"`
			tracker.Stats
		}{label, st})
	}
	fmt.Fprintf(w, "label %s\n", label)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "pending\tleased\tdelayed (retry)\tdone\tfailed\tdiscovered\t\n")
	fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t\n", st.Pending, st.Leased, st.Delayed, st.Done, st.Failed, st.Added)
	return tw.Flush()
}

// failedNewestFirst lists up to limit (0: all) dead letters, those labelled
// label when it is set, the most recent first, page by page (the tracker
// filters).
func failedNewestFirst(ctx context.Context, tr tracker.Engine, label string, limit int) ([]tracker.FailedItem, error) {
	var out []tracker.FailedItem
	q := tracker.FailedQuery{Label: label, Limit: 500}
	for {
		if limit > 0 {
			q.Limit = min(q.Limit, limit-len(out))
		}
		page, err := tr.FailedPage(ctx, q)
		if err != nil {
			return out, err
		}
		out = append(out, page.Items...)
		if page.Next == "" || limit > 0 && len(out) >= limit {
			return out, nil
		}
		q.Cursor = page.Next
	}
}
