package dashboard

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/tracker"
	"github.com/distscrape/distscrape/tracker/memtracker"
)

// stateProxies reads /api/state until it has a snapshot and returns the
// page and the snapshot's proxies member (nil when absent).
func stateProxies(t *testing.T, b bundle) (string, json.RawMessage) {
	t.Helper()
	var raw map[string]json.RawMessage
	waitFor(t, "a snapshot", func() bool {
		res, body := do(t, "GET", b.url+"/api/state", "", map[string]string{"Authorization": "Bearer " + testToken})
		return res.StatusCode == 200 && json.Unmarshal([]byte(body), &raw) == nil
	})
	_, page := do(t, "GET", b.url+"/", "", map[string]string{"Authorization": "Bearer " + testToken})
	return page, raw["proxies"]
}

// TestOverviewProxies: with a source, the overview's state lists the
// proxies in quarantine (here kept in the tracker's shared values, as
// workers record them), each URL and error through Redact, and the page
// has their table; without a source, no proxies member.
func TestOverviewProxies(t *testing.T) {
	b := setup(t, Config{Token: testToken})
	if _, raw := stateProxies(t, b); raw != nil {
		t.Errorf("proxies %s without a source, want none", raw)
	}

	// The fleet's shared values, in a tracker of their own.
	shared, err := memtracker.New(memtracker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shared.Close() })
	store := tracker.Engine(shared).(tracker.SharedStore)
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	v, _ := json.Marshal(QuarantinedProxy{Country: "fr", Until: until, LastError: "dial http://u:s3cret@127.0.0.1:9: refused", By: "h:1"})
	if err := store.PutField(context.Background(), "proxies:quarantined", "http://u:s3cret@127.0.0.1:9", v, time.Hour); err != nil {
		t.Fatal(err)
	}
	source := func(ctx context.Context) ([]QuarantinedProxy, error) {
		fields, err := store.Fields(ctx, "proxies:quarantined")
		var out []QuarantinedProxy
		for u, v := range fields {
			var p QuarantinedProxy
			if json.Unmarshal(v, &p) == nil {
				p.URL = u
				out = append(out, p)
			}
		}
		return out, err
	}
	b = setup(t, Config{Token: testToken, Proxies: source, Redact: func(s string) string { return strings.ReplaceAll(s, "s3cret", "xxxxx") }})
	page, raw := stateProxies(t, b)
	var got proxiesView
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("proxies %s: %v", raw, err)
	}
	want := QuarantinedProxy{URL: "http://u:xxxxx@127.0.0.1:9", Country: "fr", Until: until, LastError: "dial http://u:xxxxx@127.0.0.1:9: refused", By: "h:1"}
	if got.Error != "" || len(got.Quarantined) != 1 || got.Quarantined[0] != want {
		t.Errorf("proxies %s, want %+v", raw, want)
	}
	if !strings.Contains(page, `id="proxies-body"`) {
		t.Error("the overview has no proxies table")
	}
}
