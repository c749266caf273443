package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/internal/testkit/smtptest"
	"github.com/distscrape/distscrape/test/fixturesite"
	"github.com/distscrape/distscrape/test/testbin"
)

// hookReceiver keeps the JSON events a webhook of the test receives.
type hookReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	kinds []string
	auth  []string
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct{ Kind, Text string }
		if json.Unmarshal(body, &ev) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		kind := ev.Kind
		if kind == "" { // the slack form: {"text": ...}
			kind = "slack:" + strings.SplitN(ev.Text, "\n", 2)[0]
		}
		h.mu.Lock()
		h.kinds = append(h.kinds, kind)
		h.auth = append(h.auth, r.Header.Get("Authorization"))
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) got() ([]string, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.kinds...), append([]string(nil), h.auth...)
}

const (
	notifyPassword = "smtp-Pass#word/42"
	notifyToken    = "hook-bearer-token-0042"
)

// A fleet of two workers sends each report once, not once per worker:
// "done" at the end of a crawl, "limit" when a limit stops it, to a JSON
// webhook, a Slack-form webhook and by e-mail (STARTTLS, AUTH PLAIN).
// No secret shows in the workers' output or in `check`.
func TestNotifyFleetOnce(t *testing.T) {
	for _, tc := range []struct {
		name, limits, kind, slack string
	}{
		{"done", "", "done", "slack:Crawl e2e is done."},
		{"limit", "limits: {max_pages: 40}", "limit", "slack:Crawl e2e stopped at its limit max_pages 40; what is pending is kept (raise the limit and start the workers to carry on)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := fixturesite.Start(t, fixturesite.Options{Pages: 150, Latency: 2 * time.Millisecond})
			rs := redistest.Start(t, redistest.Options{})
			hook, slack := newHookReceiver(t), newHookReceiver(t)
			mail := smtptest.Start(t, smtptest.Options{Username: "crawler", Password: notifyPassword})
			dir := t.TempDir()
			notifyYAML := fmt.Sprintf(`notify:
  webhooks:
    - {url: '${HOOK_URL}', headers: {Authorization: 'Bearer ${HOOK_TOKEN}'}}
    - {url: '%s/services/T0/B0/slack', format: slack}
  email: {smtp: '%s', from: crawler@example.org, to: [ops@example.org], username: crawler, password: '${SMTP_PASSWORD}', ca_file: '%s'}
  timeout: 5s`, slack.URL, mail.Addr(), mail.CAFile(t))
			cfg := crawlConfig{
				Tracker: redisTracker(rs, "30s"),
				Scraper: linkScraper(site),
				Saver:   "saver: {kind: none}",
				Limits:  tc.limits + "\n" + notifyYAML,
			}.write(t, dir)
			cmd := testbin.Cmd{Dir: dir, Env: []string{"HOOK_URL=" + hook.URL + "/hooks/crawl", "HOOK_TOKEN=" + notifyToken, "SMTP_PASSWORD=" + notifyPassword}}
			if r := cmd.Run(t, time.Minute, "seed", "-c", cfg); r.Code != 0 {
				t.Fatalf("seed: %s", r)
			}
			w1 := cmd.Start(t, "worker", "-c", cfg, "--id", "w1")
			w2 := cmd.Start(t, "worker", "-c", cfg, "--id", "w2")
			var out strings.Builder
			for _, w := range []*testbin.Proc{w1, w2} {
				r := w.Wait(t, runTimeout)
				if r.Code != 0 {
					t.Fatalf("%s: %s", w.Name, r)
				}
				out.WriteString(r.Stdout + r.Stderr)
			}
			check := cmd.Run(t, time.Minute, "check", "-c", cfg)
			out.WriteString(check.Stdout + check.Stderr)
			kinds, auth := hook.got()
			if len(kinds) != 1 || kinds[0] != tc.kind || auth[0] != "Bearer "+notifyToken {
				t.Errorf("JSON webhook got %v (Authorization %v); want one %s", kinds, auth, tc.kind)
			}
			if sk, _ := slack.got(); len(sk) != 1 || sk[0] != tc.slack {
				t.Errorf("slack webhook got %q; want one %q", sk, tc.slack)
			}
			msgs := mail.Messages()
			if len(msgs) != 1 || !strings.Contains(string(msgs[0].Data), "X-Distscrape-Event: "+tc.kind+"\r\n") || !msgs[0].TLS {
				t.Errorf("%d e-mails; want one %s over TLS", len(msgs), tc.kind)
			}
			for _, secret := range []string{notifyPassword, notifyToken, "/hooks/crawl", "T0/B0/slack"} {
				if strings.Contains(out.String(), secret) {
					t.Errorf("%q in the output of the workers or check:\n%s", secret, out.String())
				}
			}
		})
	}
}

var elapsedRE = regexp.MustCompile(`pages saved +\d+ \([^)]*\) in ([0-9.]+[a-zµ]+),`)

// A receiver that is down costs the crawl nothing: with webhooks and a
// mail relay that hang (accept, never answer) or refuse connections, the
// crawl takes what it takes without them, and the process exits at most
// one notify.timeout after its summary. Figures in the log (-v).
func TestNotifyReceiverDownCostsNothing(t *testing.T) {
	site := fixturesite.Start(t, fixturesite.Options{Pages: 300, Latency: 2 * time.Millisecond})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server notices the client leave, and ends the context
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close) // after the crawls: every request is gone by then
	hangMail := smtptest.Start(t, smtptest.Options{Hang: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close() // a port nothing listens on
	const timeout = 2 * time.Second
	cases := []struct{ name, notify string }{
		{"none", ""},
		{"hanging", fmt.Sprintf("notify: {webhooks: [{url: '%s/h'}], email: {smtp: '%s', from: a@example.org, to: [b@example.org], starttls: false}, timeout: 2s}", hang.URL, hangMail.Addr())},
		{"refused", fmt.Sprintf("notify: {webhooks: [{url: 'http://%s/h'}], email: {smtp: '%s', from: a@example.org, to: [b@example.org], starttls: false}, timeout: 2s}", closed, closed)},
	}
	var base time.Duration
	for _, tc := range cases {
		dir := t.TempDir()
		cfg := crawlConfig{Scraper: linkScraper(site), Saver: "saver: {kind: none}",
			Fetch: "fetch: {concurrency: 8, per_host_concurrency: 8, timeout: 10s}", Limits: tc.notify}.write(t, dir)
		start := time.Now()
		r := testbin.Cmd{Dir: dir}.Run(t, runTimeout, "crawl", "-c", cfg, "--no-progress")
		wall := time.Since(start)
		m := elapsedRE.FindStringSubmatch(r.Stdout)
		if r.Code != 0 || m == nil || !strings.Contains(r.Stdout, "crawl done") {
			t.Fatalf("%s: %s", tc.name, r)
		}
		crawl, _ := time.ParseDuration(m[1])
		t.Logf("receiver %-8s crawl %v, process %v", tc.name, crawl, wall.Round(time.Millisecond))
		if tc.name == "none" {
			base = crawl
			continue
		}
		// Generous bounds: a timed test asserts no figure, only that
		// nothing waited on the receiver.
		if crawl > 3*base+5*time.Second {
			t.Errorf("%s: the crawl took %v against %v without receivers", tc.name, crawl, base)
		}
		if wall > crawl+timeout+20*time.Second {
			t.Errorf("%s: the process took %v for a crawl of %v (notify.timeout %v)", tc.name, wall, crawl, timeout)
		}
		if !strings.Contains(r.Stderr, "report not delivered") && !strings.Contains(r.Stderr, "not every report was delivered") {
			t.Errorf("%s: the lost report is not logged:\n%s", tc.name, r.Stderr)
		}
	}
}

// TestWebhookMetadataRefused: a webhook at a cloud metadata address, in
// every spelling the fetcher refuses, is refused at config load by check
// and crawl (exit 2, naming the key), its path (a secret) never shown.
func TestWebhookMetadataRefused(t *testing.T) {
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data", "http://[fd00:ec2::254]/x", "http://metadata.google.internal/x",
		"http://METADATA.google.internal./x", "http://metadata.goog/x", "http://2852039166/x", "http://0xa9fea9fe/x",
		"http://0251.0376.0251.0376/x", "http://169.254.43518/x", "http://[::ffff:169.254.169.254]/x",
		"http://[64:ff9b::a9fe:a9fe]/x", "http://100.100.100.200/x", "https://169.254.170.2:8443/x",
	} {
		dir := t.TempDir()
		cfg := writeYAML(t, dir, "crawl: n", "scraper: {seeds: ['http://127.0.0.1:1/']}", "saver: {kind: none}",
			fmt.Sprintf("notify: {webhooks: [{url: '%s/SECRETPATH'}]}", u))
		for _, cmd := range []string{"check", "crawl"} {
			r := (testbin.Cmd{Dir: dir}).Run(t, time.Minute, cmd, "-c", cfg)
			if r.Code != 2 || !strings.Contains(r.Stderr, "notify.webhooks[0].url") || !strings.Contains(r.Stderr, "metadata") {
				t.Errorf("%s with a webhook at %s: want exit 2 naming notify.webhooks[0].url and metadata\n%s", cmd, u, r)
			}
			if strings.Contains(r.Stdout+r.Stderr, "SECRETPATH") {
				t.Errorf("%s printed the webhook's path\n%s", cmd, r)
			}
		}
	}
}
