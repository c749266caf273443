package notify

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/redact"
	"github.com/distscrape/distscrape/tracker"
)

const hookSecret = "T0SECRET/B0SECRET/xoxoSECRETpath"

func webhook(t *testing.T, url, format string, headers map[string]string) *Webhook {
	t.Helper()
	w, err := NewWebhook(WebhookConfig{URL: url, Format: format, Headers: headers})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

var doneStats = tracker.Stats{Done: 1200, Failed: 3, Added: 1203, Bytes: 5 << 20, Workers: 2}

func TestWebhookJSON(t *testing.T) {
	r := newReceiver(t, nil)
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	n := New(fast(webhook(t, r.URL+"/hook", "", map[string]string{"Authorization": "Bearer tok-123456", "X-Team": "crawl"})))
	n.Notify(LimitEvent("shop", "w1", "max_pages 100", doneStats, at))
	n.Close(context.Background())
	reqs := r.wait(t, 1)
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer tok-123456" || reqs[0].Header.Get("X-Team") != "crawl" {
		t.Errorf("headers %v", reqs[0].Header)
	}
	if ct := reqs[0].Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var m map[string]any
	if err := json.Unmarshal(reqs[0].Body, &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"kind": "limit", "crawl": "shop", "worker": "w1", "time": "2030-01-02T03:04:05Z", "limit": "max_pages 100"} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v (body %s)", k, m[k], want, reqs[0].Body)
		}
	}
	counts, _ := m["counts"].(map[string]any)
	if counts["done"] != 1200.0 || counts["failed"] != 3.0 || counts["bytes"] != float64(5<<20) || counts["workers"] != 2.0 {
		t.Errorf("counts %v", counts)
	}
	text, _ := m["text"].(string)
	if !strings.Contains(text, "stopped at its limit max_pages 100") || !strings.Contains(text, "1200 done, 3 dead letters") {
		t.Errorf("text %q", text)
	}
	for _, k := range []string{"Key", "Once", "key", "once"} {
		if _, ok := m[k]; ok {
			t.Errorf("the claim key leaked into the body: %s", reqs[0].Body)
		}
	}
}

func TestWebhookSlack(t *testing.T) {
	r := newReceiver(t, nil)
	n := New(fast(webhook(t, r.URL, FormatSlack, nil)))
	n.Notify(DoneEvent("shop", "w1", doneStats, time.Now()))
	n.Close(context.Background())
	body := r.wait(t, 1)[0].Body
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	text, _ := m["text"].(string)
	if len(m) != 1 || !strings.HasPrefix(text, "Crawl shop is done.\n1200 done") || !strings.Contains(text, "(reported by worker w1 at ") {
		t.Errorf("slack body %s", body)
	}
}

// Retryable answers (408, 429, 5xx) and refused connections are tried
// again; other answers (4xx, 3xx: redirects are not followed) are not.
func TestWebhookRetries(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    int
		delivered bool
		requests  int
	}{
		{"500 then 200", 500, true, 2},
		{"503 then 200", 503, true, 2},
		{"429 then 200", 429, true, 2},
		{"408 then 200", 408, true, 2},
		{"400", 400, false, 1},
		{"401", 401, false, 1},
		{"404", 404, false, 1},
		{"302", 302, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReceiver(t, func(n int) int {
				if n == 1 || !tc.delivered {
					return tc.status
				}
				return 200
			})
			n := New(fast(webhook(t, r.URL, "", nil)))
			n.Notify(DoneEvent("shop", "w1", doneStats, time.Now()))
			c := n.Close(context.Background())
			if got := len(r.requests()); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
			if (c.Sent == 1) != tc.delivered || (c.Failed == 1) == tc.delivered {
				t.Errorf("counters %+v", c)
			}
		})
	}
}

// The webhook's URL path is a secret (Slack's is), like its header values
// and the ${VAR} values: none reaches a log line or an error.
func TestWebhookSecretsStayOut(t *testing.T) {
	r := newReceiver(t, func(int) int { return 500 })
	red := redact.New("tok-123456-secret")
	log, lb := newLog(red)
	w := webhook(t, r.URL+"/services/"+hookSecret, "", map[string]string{"Authorization": "Bearer tok-123456-secret"})
	cfg := fast(w)
	cfg.Logger, cfg.Redact, cfg.Attempts = log, red.String, 2
	n := New(cfg)
	n.Notify(DoneEvent("shop", "w1", doneStats, time.Now()))
	n.Close(context.Background())
	err := w.Send(context.Background(), DoneEvent("shop", "w1", doneStats, time.Now()))
	closed := webhook(t, "http://127.0.0.1:1/services/"+hookSecret, "", nil)
	cerr := closed.Send(context.Background(), DoneEvent("shop", "w1", doneStats, time.Now()))
	out := lb.String() + "\n" + err.Error() + "\n" + cerr.Error()
	for _, s := range []string{"SECRET", "tok-123456"} {
		if strings.Contains(out, s) {
			t.Errorf("%q in the logs or errors:\n%s", s, out)
		}
	}
	if !strings.Contains(out, "webhook 127.0.0.1:") || !strings.Contains(out, "500 Internal Server Error") {
		t.Errorf("the logs do not say which receiver failed and how:\n%s", out)
	}
	if !strings.Contains(cerr.Error(), "connection refused") {
		t.Errorf("closed port: %v", cerr)
	}
}

func TestNewWebhookRefuses(t *testing.T) {
	for _, tc := range []struct{ url, format string }{
		{"", ""}, {"hooks.slack.com/services/x", ""}, {"ftp://example.org/x", ""}, {"http:///path", ""},
		{"https://example.org/x", "xml"}, {"https://example.org/x", "Slack"},
	} {
		if _, err := NewWebhook(WebhookConfig{URL: tc.url, Format: tc.format}); err == nil {
			t.Errorf("%q %q accepted", tc.url, tc.format)
		} else if strings.Contains(err.Error(), "/x") {
			t.Errorf("%q: the error shows the path: %v", tc.url, err)
		}
	}
	_, err := NewWebhook(WebhookConfig{URL: "https://u:pw@example.org/x", Format: "bad"})
	if err == nil || strings.Contains(err.Error(), "pw") {
		t.Errorf("%v", err)
	}
}
