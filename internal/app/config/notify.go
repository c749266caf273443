package config

import (
	"crypto/x509"
	"maps"
	"net"
	"net/mail"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/internal/redact"
)

// Notify is the `notify:` section: reports to the operator
// (internal/app/notify). It is on when it names a receiver: a webhook or an
// e-mail relay.
type Notify struct {
	// On lists the events sent: done, limit, dead_letters, worker_dead,
	// tracker_down, summary; default all but summary.
	On       []string  `yaml:"on"`
	Webhooks []Webhook `yaml:"webhooks"`
	Email    Email     `yaml:"email"`
	// DeadLetterRate raises dead_letters when that share of the items
	// settled (done or failed) within the window failed.
	DeadLetterRate DeadLetterRate `yaml:"dead_letter_rate"`
	SummaryEvery   time.Duration  `yaml:"summary_every"`      // summary: one per this, fleet-wide; default 1h
	TrackerDown    time.Duration  `yaml:"tracker_down_after"` // tracker_down once unreachable this long; default 1m
	Timeout        time.Duration  `yaml:"timeout"`            // one attempt of one send; default 10s
	Attempts       int            `yaml:"attempts"`           // per event and receiver; default 3
	Queue          int            `yaml:"queue"`              // events waiting per receiver (then the oldest is dropped); default 64
}

// Webhook is one notify.webhooks entry.
type Webhook struct {
	URL     string            `yaml:"url"`    // required; http:// or https://; write it as ${VAR}: a Slack URL is a secret
	Format  string            `yaml:"format"` // json (default: the event) | slack ({"text": ...})
	Headers map[string]string `yaml:"headers"`
}

// Email is notify.email: one SMTP relay.
type Email struct {
	SMTP     string   `yaml:"smtp"` // required: host:port (587: submission with STARTTLS)
	From     string   `yaml:"from"` // required: an address
	To       []string `yaml:"to"`   // required: addresses
	Username string   `yaml:"username"`
	Password string   `yaml:"password"` // with username; write it as ${VAR}
	// StartTLS requires STARTTLS before anything is sent (default true): a
	// relay that does not offer it is refused.
	StartTLS *bool `yaml:"starttls"`
	// AllowInsecureAuth lets the password go without TLS (starttls: false);
	// for a relay on the same host only.
	AllowInsecureAuth bool   `yaml:"allow_insecure_auth"`
	CAFile            string `yaml:"ca_file"` // PEM certificates trusted for STARTTLS instead of the system's
}

// DeadLetterRate is notify.dead_letter_rate.
type DeadLetterRate struct {
	Threshold float64       `yaml:"threshold"` // a share, 0 < t ≤ 1; default 0.05
	Window    time.Duration `yaml:"window"`    // default 5m
}

// NotifyKinds are the events notify.on may list.
var NotifyKinds = []string{"done", "limit", "dead_letters", "worker_dead", "tracker_down", "summary"}

// Defaults of the notify section, applied when it is on.
var (
	DefaultNotifyOn = []string{"done", "limit", "dead_letters", "worker_dead", "tracker_down"}
)

const (
	DefaultDeadLetterThreshold = 0.05
	DefaultDeadLetterWindow    = 5 * time.Minute
	DefaultSummaryEvery        = time.Hour
	DefaultTrackerDownAfter    = time.Minute
	DefaultNotifyTimeout       = 10 * time.Second
	DefaultNotifyAttempts      = 3
	DefaultNotifyQueue         = 64
)

// Enabled says whether the section names a receiver.
func (n *Notify) Enabled() bool { return len(n.Webhooks) > 0 || n.Email.SMTP != "" }

// Sends says whether events of kind are sent.
func (n *Notify) Sends(kind string) bool { return n.Enabled() && slices.Contains(n.On, kind) }

// notifyDefault is the default of a notify key of zeroMeansDefault.
var notifyDefault = map[string]any{
	"notify.dead_letter_rate.threshold": DefaultDeadLetterThreshold,
	"notify.dead_letter_rate.window":    DefaultDeadLetterWindow,
	"notify.summary_every":              DefaultSummaryEvery,
	"notify.tracker_down_after":         DefaultTrackerDownAfter,
	"notify.timeout":                    DefaultNotifyTimeout,
	"notify.attempts":                   DefaultNotifyAttempts,
	"notify.queue":                      DefaultNotifyQueue,
}

func (c *Config) applyNotifyDefaults() {
	n := &c.Notify
	if !n.Enabled() {
		return
	}
	if n.On == nil {
		n.On = slices.Clone(DefaultNotifyOn)
	}
	// Each kind's own keys get defaults only when the kind is on, so one
	// set for a kind that is off is seen (and refused) by validation.
	if slices.Contains(n.On, "dead_letters") {
		if n.DeadLetterRate.Threshold == 0 {
			n.DeadLetterRate.Threshold = DefaultDeadLetterThreshold
		}
		setDur(&n.DeadLetterRate.Window, DefaultDeadLetterWindow)
	}
	if slices.Contains(n.On, "summary") {
		setDur(&n.SummaryEvery, DefaultSummaryEvery)
	}
	if slices.Contains(n.On, "tracker_down") {
		setDur(&n.TrackerDown, DefaultTrackerDownAfter)
	}
	setDur(&n.Timeout, DefaultNotifyTimeout)
	setInt(&n.Attempts, DefaultNotifyAttempts)
	setInt(&n.Queue, DefaultNotifyQueue)
	for i := range n.Webhooks {
		setStr(&n.Webhooks[i].Format, "json")
	}
	if n.Email.SMTP != "" && n.Email.StartTLS == nil {
		yes := true
		n.Email.StartTLS = &yes
	}
}

func (c *Config) validateNotify(p *problems) {
	n := &c.Notify
	if !n.Enabled() {
		if n.hasSettings() {
			p.add("notify", "no receiver: add notify.webhooks or notify.email.smtp (the other keys say what to send, not where)")
		}
		return
	}
	seen := map[string]bool{}
	for i, k := range n.On {
		path := "notify.on[" + strconv.Itoa(i) + "]"
		if oneOf(p, path, k, NotifyKinds...) && seen[k] {
			p.add(path, "%s is listed twice", quote(k))
		}
		seen[k] = true
	}
	if len(n.On) == 0 {
		p.add("notify.on", "empty: list the events to send (%s), or remove the notify section", strings.Join(NotifyKinds, ", "))
	}
	onlyWith := func(path, kind string, set bool) bool {
		if set && !seen[kind] {
			p.add(path, "applies only when notify.on lists %s", kind)
			return false
		}
		return seen[kind]
	}
	r := n.DeadLetterRate
	if onlyWith("notify.dead_letter_rate", "dead_letters", r.Threshold != 0 || r.Window != 0) {
		if t := r.Threshold; !(t > 0 && t <= 1) {
			p.add("notify.dead_letter_rate.threshold", "%v: want a share above 0 and at most 1 (0.05 is 5%%)", t)
		}
		durRange(p, "notify.dead_letter_rate.window", r.Window, time.Minute, 24*time.Hour)
	}
	if onlyWith("notify.summary_every", "summary", n.SummaryEvery != 0) {
		durRange(p, "notify.summary_every", n.SummaryEvery, time.Minute, 7*24*time.Hour)
	}
	if onlyWith("notify.tracker_down_after", "tracker_down", n.TrackerDown != 0) {
		durRange(p, "notify.tracker_down_after", n.TrackerDown, time.Second, 24*time.Hour)
	}
	durRange(p, "notify.timeout", n.Timeout, time.Second, 5*time.Minute)
	intRange(p, "notify.attempts", n.Attempts, 1, 10)
	intRange(p, "notify.queue", n.Queue, 1, 10000)
	for i, w := range n.Webhooks {
		path := "notify.webhooks[" + strconv.Itoa(i) + "]"
		if w.URL == "" {
			p.add(path+".url", "required: the http:// or https:// URL to POST to (write it as ${VAR})")
		} else if u := checkCredentialURL(p, path+".url", w.URL, "http", "https"); u != nil && fetch.IsMetadataURL(u) {
			p.add(path+".url", "host %s is a cloud metadata address (%v): a report must not reach it", quote(u.Hostname()), fetch.ErrMetadata)
		}
		oneOf(p, path+".format", w.Format, "json", "slack")
		checkHeaders(p, path+".headers", w.Headers)
	}
	if n.Email.SMTP != "" {
		n.Email.validate(p)
	}
}

// hasSettings says whether any key of the section is set.
func (n *Notify) hasSettings() bool {
	return len(n.On) > 0 || n.DeadLetterRate != (DeadLetterRate{}) || n.SummaryEvery != 0 || n.TrackerDown != 0 ||
		n.Timeout != 0 || n.Attempts != 0 || n.Queue != 0 || n.Email.From != "" || len(n.Email.To) > 0 ||
		n.Email.Username != "" || n.Email.Password != "" || n.Email.StartTLS != nil || n.Email.CAFile != "" || n.Email.AllowInsecureAuth
}

func (e *Email) validate(p *problems) {
	checkHostPort(p, "notify.email.smtp", e.SMTP)
	if h, port, err := net.SplitHostPort(e.SMTP); err == nil && (h == "" || port == "0") {
		p.add("notify.email.smtp", "%s: want the relay's host:port (smtp.example.org:587)", quote(e.SMTP))
	}
	if e.From == "" {
		p.add("notify.email.from", "required: the sender's address (crawler@example.org)")
	} else if _, err := mail.ParseAddress(e.From); err != nil {
		p.add("notify.email.from", "%s is not an address: %v", quote(e.From), err)
	}
	if len(e.To) == 0 {
		p.add("notify.email.to", "required: at least one address")
	}
	for i, a := range e.To {
		if _, err := mail.ParseAddress(a); err != nil {
			p.add("notify.email.to["+strconv.Itoa(i)+"]", "%s is not an address: %v", quote(a), err)
		}
	}
	switch {
	case e.Username != "" && e.Password == "":
		p.add("notify.email.password", "required with notify.email.username (write it as ${VAR})")
	case e.Username == "" && e.Password != "":
		p.add("notify.email.username", "required with notify.email.password")
	}
	tls := e.StartTLS == nil || *e.StartTLS
	switch {
	case tls && e.AllowInsecureAuth:
		p.add("notify.email.allow_insecure_auth", "applies only with starttls: false")
	case !tls && e.Username != "" && !e.AllowInsecureAuth:
		p.add("notify.email.starttls", "false with a username would send the password in clear: keep starttls on, or set allow_insecure_auth: true for a relay on this host")
	}
	if e.CAFile == "" {
		return
	}
	if !tls {
		p.add("notify.email.ca_file", "applies only with starttls on")
		return
	}
	pem, err := os.ReadFile(e.CAFile)
	switch {
	case err != nil:
		p.add("notify.email.ca_file", "%v", err)
	case !x509.NewCertPool().AppendCertsFromPEM(pem):
		p.add("notify.email.ca_file", "%s holds no PEM certificate", quote(e.CAFile))
	}
}

// checkHeaders checks header names and values (fetch.headers' rule).
func checkHeaders(p *problems, path string, h map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(h)) {
		if !validHeaderName(name) {
			p.add(path+"."+name, "%s is not a valid header name", quote(name))
		}
		if strings.ContainsFunc(h[name], func(r rune) bool { return r == '\r' || r == '\n' || r == 0 }) {
			p.add(path+"."+name, "value contains a line break or NUL")
		}
	}
}

// redactNotify hides the section's secrets in r, a clone: the password,
// sensitive header values, and a webhook URL's user information, path and
// query (Slack, Discord and Teams put the secret in the path).
func (r *Config) redactNotify(red *redact.Redactor) {
	n := &r.Notify
	for i := range n.Webhooks {
		n.Webhooks[i].URL = webhookShown(red, n.Webhooks[i].URL)
		redactHeaders(red, n.Webhooks[i].Headers)
	}
	if n.Email.Password != "" {
		n.Email.Password = redact.Mark
	}
}

// webhookShown is a webhook URL safe to show: scheme and host.
func webhookShown(red *redact.Redactor, raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return redact.Mark
	}
	shown := u.Scheme + "://" + u.Host
	if u.User != nil {
		shown = u.Scheme + "://" + redact.Mark + "@" + u.Host
	}
	if u.Path != "" || u.RawQuery != "" {
		shown += "/" + redact.Mark
	}
	return red.String(shown)
}

// minSecretPath is the shortest webhook path hidden wherever it appears:
// a shorter one ("/hook", "/api/notify") is no token, and hiding it would
// blank out unrelated text.
const minSecretPath = 16

// notifySecrets are the section's values that are secrets wherever they
// appear, even written in the file or set by DISTSCRAPE_*.
func (c *Config) notifySecrets() []string {
	var s []string
	if c.Notify.Email.Password != "" {
		s = append(s, c.Notify.Email.Password)
	}
	for _, w := range c.Notify.Webhooks {
		for name, v := range w.Headers {
			if redact.Sensitive(name) {
				s = append(s, v)
			}
		}
		if u, err := url.Parse(w.URL); err == nil && (len(u.Path) > 1 || u.RawQuery != "") {
			s = append(s, w.URL)
			if len(u.Path) >= minSecretPath { // a token-like path: Slack's is ~70 bytes
				s = append(s, strings.TrimPrefix(u.EscapedPath(), "/"))
			}
		}
	}
	return s
}

func (n *Notify) clone() Notify {
	r := *n
	r.On = clone(n.On)
	r.Webhooks = clone(n.Webhooks)
	for i := range r.Webhooks {
		r.Webhooks[i].Headers = maps.Clone(n.Webhooks[i].Headers)
	}
	r.Email.To = clone(n.Email.To)
	r.Email.StartTLS = cloneBool(n.Email.StartTLS)
	return r
}
