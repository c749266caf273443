package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const notifyHead = "crawl: x\nscraper: {seeds: ['https://a.example/']}\n"

// fullNotify sets every key of the section.
const fullNotify = notifyHead + `
notify:
  on: [done, limit, dead_letters, worker_dead, tracker_down, summary]
  webhooks:
    - url: '${SLACK_HOOK}'
      format: slack
    - url: https://ops.example/hooks/crawl
      headers: {Authorization: 'Bearer ${HOOK_TOKEN}', X-Team: crawl}
  email:
    smtp: smtp.example.org:587
    from: 'Crawler <crawler@example.org>'
    to: [ops@example.org, 'Ana <ana@example.org>']
    username: crawler
    password: '${SMTP_PASSWORD}'
  dead_letter_rate: {threshold: 0.1, window: 10m}
  summary_every: 30m
  tracker_down_after: 2m
  timeout: 5s
  attempts: 4
  queue: 32
`

var notifyEnv = map[string]string{
	"SLACK_HOOK":    "https://hooks.slack.example/services/T0SECRET0/B0SECRET0/xoxSECRETxox",
	"HOOK_TOKEN":    "hook-token-123",
	"SMTP_PASSWORD": "smtp-pass-456",
}

func TestNotifyConfig(t *testing.T) {
	t.Parallel()
	cfg, err := parse([]byte(fullNotify), "n.yaml", envOf(notifyEnv))
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Notify
	if !n.Enabled() || !n.Sends("summary") || n.SummaryEvery != 30*time.Minute || n.TrackerDown != 2*time.Minute ||
		n.DeadLetterRate != (DeadLetterRate{0.1, 10 * time.Minute}) || n.Timeout != 5*time.Second || n.Attempts != 4 || n.Queue != 32 {
		t.Errorf("notify %+v", n)
	}
	if n.Webhooks[0].URL != notifyEnv["SLACK_HOOK"] || n.Webhooks[1].Format != "json" || *n.Email.StartTLS != true {
		t.Errorf("webhooks %+v, starttls %v", n.Webhooks, *n.Email.StartTLS)
	}
	// Defaults, with a receiver only.
	d, err := parse([]byte(notifyHead+"notify: {webhooks: [{url: 'https://h.example/x'}]}\n"), "d.yaml", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Notify{On: DefaultNotifyOn, Webhooks: []Webhook{{URL: "https://h.example/x", Format: "json"}},
		DeadLetterRate: DeadLetterRate{DefaultDeadLetterThreshold, DefaultDeadLetterWindow}, TrackerDown: DefaultTrackerDownAfter,
		Timeout: DefaultNotifyTimeout, Attempts: DefaultNotifyAttempts, Queue: DefaultNotifyQueue}
	if !reflect.DeepEqual(d.Notify, want) {
		t.Errorf("defaults\n%+v\nwant\n%+v", d.Notify, want)
	}
	// No section: off, nothing set.
	off, err := parse([]byte(notifyHead), "off.yaml", envOf(nil))
	if err != nil || off.Notify.Enabled() || !reflect.DeepEqual(off.Notify, Notify{}) {
		t.Errorf("no section: %+v %v", off.Notify, err)
	}
	// Marshal and parse again: the same config.
	out, err := Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := parse(out, "again.yaml", envOf(nil))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	again.secrets = cfg.secrets
	if !reflect.DeepEqual(cfg, again) {
		t.Errorf("round trip changed the config:\n%s", out)
	}
}

// The section's secrets (the password, a webhook URL's path, header values)
// never show in Redacted (check), in the Redactor's output (logs), nor in
// an error, however they were given: ${VAR}, written in the file, or by
// a DISTSCRAPE_* variable.
func TestNotifySecretsRedacted(t *testing.T) {
	t.Parallel()
	plain := strings.NewReplacer("${SLACK_HOOK}", notifyEnv["SLACK_HOOK"], "${HOOK_TOKEN}", notifyEnv["HOOK_TOKEN"],
		"${SMTP_PASSWORD}", notifyEnv["SMTP_PASSWORD"]).Replace(fullNotify)
	env := map[string]string{"DISTSCRAPE_NOTIFY_EMAIL_PASSWORD": "env-pass-789"}
	for name, tc := range map[string]struct {
		src string
		env map[string]string
	}{"vars": {fullNotify, notifyEnv}, "in the file": {plain, nil}, "DISTSCRAPE_*": {plain, env}} {
		cfg, err := parse([]byte(tc.src), "n.yaml", envOf(tc.env))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := Marshal(cfg.Redacted())
		if err != nil {
			t.Fatal(err)
		}
		red := cfg.Redactor()
		logged := red.String("POST " + cfg.Notify.Webhooks[0].URL + " with " + cfg.Notify.Email.Password + " and " +
			cfg.Notify.Webhooks[1].Headers["Authorization"] + ": services/T0SECRET0/B0SECRET0/xoxSECRETxox")
		for _, secret := range []string{"SECRET", "hook-token-123", "smtp-pass-456", "env-pass-789"} {
			if strings.Contains(string(out), secret) || strings.Contains(logged, secret) {
				t.Errorf("%s: %q shown:\n%s\n%s", name, secret, out, logged)
			}
		}
		if !strings.Contains(string(out), "url: https://hooks.slack.example/xxxxx") || !strings.Contains(string(out), "X-Team: crawl") {
			t.Errorf("%s: too much hidden:\n%s", name, out)
		}
		if cfg.Notify.Webhooks[1].Headers["Authorization"] != "Bearer hook-token-123" {
			t.Errorf("%s: Redacted changed the config itself", name)
		}
	}
	// A bad value next to a secret: the error names the key, not the secret.
	_, err := parse([]byte(strings.Replace(fullNotify, "attempts: 4", "attempts: 40", 1)), "n.yaml", envOf(notifyEnv))
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("%v", err)
	}
}

func TestBadNotify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	hook := "  webhooks: [{url: 'https://h.example/x'}]\n"
	mail := "  email: {smtp: 'smtp.example.org:587', from: a@example.org, to: [b@example.org]"
	tests := []struct{ name, yaml, path, msg string }{
		{"no receiver", "notify: {on: [done]}\n", "notify", "no receiver"},
		{"no receiver, only email keys", "notify: {email: {from: a@example.org}}\n", "notify", "no receiver"},
		{"unknown kind", "notify:\n" + hook + "  on: [done, finished]\n", "notify.on[1]", `unknown value "finished"`},
		{"kind misspelled", "notify:\n" + hook + "  on: [dead_letter]\n", "notify.on[0]", "dead_letters"},
		{"kind twice", "notify:\n" + hook + "  on: [done, done]\n", "notify.on[1]", "listed twice"},
		{"empty on", "notify:\n" + hook + "  on: []\n", "notify.on", "empty"},
		{"summary_every without summary", "notify:\n" + hook + "  summary_every: 1h\n", "notify.summary_every", "lists summary"},
		{"rate without dead_letters", "notify:\n" + hook + "  on: [done]\n  dead_letter_rate: {threshold: 0.2}\n", "notify.dead_letter_rate", "lists dead_letters"},
		{"down_after without tracker_down", "notify:\n" + hook + "  on: [done]\n  tracker_down_after: 5m\n", "notify.tracker_down_after", "lists tracker_down"},
		{"threshold over 1", "notify:\n" + hook + "  dead_letter_rate: {threshold: 5}\n", "notify.dead_letter_rate.threshold", "at most 1"},
		{"threshold negative", "notify:\n" + hook + "  dead_letter_rate: {threshold: -0.1}\n", "notify.dead_letter_rate.threshold", "above 0"},
		{"threshold zero", "notify:\n" + hook + "  dead_letter_rate: {threshold: 0}\n", "notify.dead_letter_rate.threshold", "0 is not a valid setting"},
		{"threshold percent", "notify:\n" + hook + "  dead_letter_rate: {threshold: 5%}\n", "notify.dead_letter_rate.threshold", "expected a number"},
		{"window short", "notify:\n" + hook + "  dead_letter_rate: {window: 10s}\n", "notify.dead_letter_rate.window", "out of range"},
		{"window no unit", "notify:\n" + hook + "  dead_letter_rate: {window: 300}\n", "notify.dead_letter_rate.window", "invalid duration"},
		{"summary too often", "notify:\n" + hook + "  on: [summary]\n  summary_every: 10s\n", "notify.summary_every", "out of range"},
		{"timeout zero", "notify:\n" + hook + "  timeout: 0s\n", "notify.timeout", "0 is not a valid setting"},
		{"attempts too many", "notify:\n" + hook + "  attempts: 11\n", "notify.attempts", "out of range"},
		{"queue negative", "notify:\n" + hook + "  queue: -1\n", "notify.queue", "out of range"},
		{"webhook no url", "notify: {webhooks: [{format: slack}]}\n", "notify.webhooks[0].url", "required"},
		{"webhook no scheme", "notify: {webhooks: [{url: hooks.slack.com/services/x}]}\n", "notify.webhooks[0].url", "not an absolute URL"},
		{"webhook ftp", "notify: {webhooks: [{url: 'ftp://h.example/x'}]}\n", "notify.webhooks[0].url", "scheme"},
		{"webhook no host", "notify: {webhooks: [{url: 'https:///x'}]}\n", "notify.webhooks[0].url", "no host"},
		{"webhook format", "notify: {webhooks: [{url: 'https://h.example/x', format: teams}]}\n", "notify.webhooks[0].format", "json or slack"},
		{"webhook format case", "notify: {webhooks: [{url: 'https://h.example/x', format: Slack}]}\n", "notify.webhooks[0].format", "json or slack"},
		{"webhook header name", "notify: {webhooks: [{url: 'https://h.example/x', headers: {'X Bad': a}}]}\n", "notify.webhooks[0].headers.X Bad", "not a valid header name"},
		{"webhook header newline", "notify: {webhooks: [{url: 'https://h.example/x', headers: {X-A: \"a\\r\\nB: 1\"}}]}\n", "notify.webhooks[0].headers.X-A", "line break"},
		{"webhook key typo", "notify: {webhooks: [{uri: 'https://h.example/x'}]}\n", "notify.webhooks[0].uri", "did you mean url"},
		{"smtp no port", "notify: {email: {smtp: smtp.example.org, from: a@example.org, to: [b@example.org]}}\n", "notify.email.smtp", "host:port"},
		{"smtp no host", "notify: {email: {smtp: ':587', from: a@example.org, to: [b@example.org]}}\n", "notify.email.smtp", "host:port"},
		{"smtp port 0", "notify: {email: {smtp: 'smtp.example.org:0', from: a@example.org, to: [b@example.org]}}\n", "notify.email.smtp", "host:port"},
		{"smtp port big", "notify: {email: {smtp: 'smtp.example.org:70000', from: a@example.org, to: [b@example.org]}}\n", "notify.email.smtp", "0 to 65535"},
		{"no from", "notify: {email: {smtp: 'smtp.example.org:587', to: [b@example.org]}}\n", "notify.email.from", "required"},
		{"bad from", "notify: {email: {smtp: 'smtp.example.org:587', from: 'crawler', to: [b@example.org]}}\n", "notify.email.from", "not an address"},
		{"no to", "notify:\n" + mail[:strings.Index(mail, ", to")] + "}\n", "notify.email.to", "at least one"},
		{"bad to", "notify:\n" + strings.Replace(mail, "[b@example.org]", "[b@example.org, 'x@']", 1) + "}\n", "notify.email.to[1]", "not an address"},
		{"to as a string", "notify:\n" + strings.Replace(mail, "[b@example.org]", "b@example.org", 1) + "}\n", "notify.email.to", "expected a list"},
		{"username without password", "notify:\n" + mail + ", username: u}\n", "notify.email.password", "required with"},
		{"password without username", "notify:\n" + mail + ", password: p4ssword}\n", "notify.email.username", "required with"},
		{"password in clear", "notify:\n" + mail + ", username: u, password: p4ssword, starttls: false}\n", "notify.email.starttls", "in clear"},
		{"insecure flag with TLS", "notify:\n" + mail + ", allow_insecure_auth: true}\n", "notify.email.allow_insecure_auth", "starttls: false"},
		{"ca_file without TLS", "notify:\n" + mail + ", starttls: false, ca_file: " + notPEM + "}\n", "notify.email.ca_file", "starttls on"},
		{"ca_file missing", "notify:\n" + mail + ", ca_file: " + filepath.Join(dir, "nope.pem") + "}\n", "notify.email.ca_file", "no such file"},
		{"ca_file not PEM", "notify:\n" + mail + ", ca_file: " + notPEM + "}\n", "notify.email.ca_file", "no PEM certificate"},
		{"starttls not bool", "notify:\n" + mail + ", starttls: sometimes}\n", "notify.email.starttls", "true or false"},
		{"notify a list", "notify: [done]\n", "notify", "expected a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := parse([]byte(notifyHead+tt.yaml), "test.yaml", envOf(testEnv))
			if err == nil {
				t.Fatalf("accepted: %+v", cfg.Notify)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			for _, fe := range fieldErrors(err) {
				if fe.Path == tt.path && strings.Contains(fe.Error(), tt.msg) {
					if !strings.HasPrefix(fe.Pos, "test.yaml:") {
						t.Errorf("no line: %v", fe)
					}
					return
				}
			}
			t.Errorf("want %s: ...%s...; got:\n%v", tt.path, tt.msg, err)
		})
	}
}

// Every problem of the section at once.
func TestNotifyProblemsAtOnce(t *testing.T) {
	t.Parallel()
	src := notifyHead + "notify:\n  on: [done, nope]\n  attempts: 99\n  webhooks: [{url: 'ftp://x.example/'}, {format: xml}]\n  email: {smtp: 'h:25', from: bad}\n"
	_, err := parse([]byte(src), "c.yaml", envOf(nil))
	var paths []string
	for _, fe := range fieldErrors(err) {
		paths = append(paths, fe.Path)
	}
	for _, want := range []string{"notify.on[1]", "notify.attempts", "notify.webhooks[0].url", "notify.webhooks[1].url",
		"notify.webhooks[1].format", "notify.email.from", "notify.email.to"} {
		found := false
		for _, p := range paths {
			found = found || p == want
		}
		if !found {
			t.Errorf("%s not reported; got %v", want, paths)
		}
	}
}
