package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
)

// TestPrintStatusNextDue: status shows when the first delayed item is due,
// as text and as next_due in JSON, and nothing about it when none is.
func TestPrintStatusNextDue(t *testing.T) {
	due := time.Now().Add(90 * time.Second)
	tests := []struct {
		name     string
		st       tracker.Stats
		asJSON   bool
		want     string
		wantNone string
	}{
		{name: "text", st: tracker.Stats{Delayed: 2, NextDue: due}, want: "next retry due " + due.Local().Format(time.DateTime)},
		{name: "json", st: tracker.Stats{Delayed: 2, NextDue: due}, asJSON: true, want: `"next_due":"` + due.Format("2006-01-02T15:04:05")},
		{name: "text, none delayed", st: tracker.Stats{Pending: 3}, wantNone: "next retry"},
		{name: "json, none delayed", st: tracker.Stats{Pending: 3}, asJSON: true, wantNone: "next_due"},
		{name: "text, a revisit waiting", st: tracker.Stats{Done: 1, Revisits: 1, NextDue: due}, want: "next revisit due " + due.Local().Format(time.DateTime)},
		{name: "text, both", st: tracker.Stats{Delayed: 1, Revisits: 1, NextDue: due}, want: "next retry or revisit due "},
		{name: "text, paused", st: tracker.Stats{Paused: true, PausedAt: due, PausedBy: "op@host"}, want: "PAUSED since " + due.Local().Format(time.DateTime)},
		{name: "text, paused, resume names the config", st: tracker.Stats{Paused: true, PausedAt: due, PausedBy: "op@host"}, want: "; resume with: distscrape resume -c c.yaml\n"},
		{name: "text, revisits counted", st: tracker.Stats{Done: 3, Revisits: 2, Unchanged: 5}, want: "2 revisit(s) waiting (done, due again later); 5 revisit(s) answered unchanged (304)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := printStatus(&b, tt.st, nil, tt.asJSON, "distscrape resume -c c.yaml"); err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && !strings.Contains(b.String(), tt.want) {
				t.Errorf("status says %q, want %q in it", b.String(), tt.want)
			}
			if tt.wantNone != "" && strings.Contains(b.String(), tt.wantNone) {
				t.Errorf("status says %q, want no %q", b.String(), tt.wantNone)
			}
		})
	}
}
