package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/distscrape/distscrape/fetch"
)

// Webhook formats.
const (
	FormatJSON  = "json"  // the Event as JSON
	FormatSlack = "slack" // {"text": Message}: Slack, Mattermost, Discord's /slack, Rocket.Chat
)

// WebhookConfig is one webhook receiver.
type WebhookConfig struct {
	URL     string            // http:// or https://; may hold a secret in its path
	Format  string            // FormatJSON (default) or FormatSlack
	Headers map[string]string // sent with every request (Authorization: Bearer ...)
	// Client sends the requests; nil: a client of its own that neither
	// follows redirects (the headers would follow them) nor uses a proxy
	// from the environment.
	Client *http.Client
}

// Webhook POSTs events to a URL.
type Webhook struct {
	cfg  WebhookConfig
	name string
}

// maxAnswer bounds the part of a receiver's answer kept for an error.
const maxAnswer = 512

// NewWebhook checks cfg and returns the sender. Its errors never show the
// URL beyond its host.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("notify: webhook: not an http:// or https:// URL with a host")
	}
	if fetch.IsMetadataURL(u) {
		return nil, fmt.Errorf("notify: webhook %s: %w", u.Host, fetch.ErrMetadata)
	}
	switch cfg.Format {
	case "":
		cfg.Format = FormatJSON
	case FormatJSON, FormatSlack:
	default:
		return nil, fmt.Errorf("notify: webhook %s: unknown format %q (want json or slack)", u.Host, cfg.Format)
	}
	if cfg.Client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = nil
		// A name that resolves to a metadata address is refused when dialed.
		tr.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: fetch.RefuseMetadata}).DialContext
		cfg.Client = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	return &Webhook{cfg: cfg, name: "webhook " + u.Host}, nil
}

// Name implements Sender.
func (w *Webhook) Name() string { return w.name }

// Body is what the webhook receives for ev.
func (w *Webhook) Body(ev Event) ([]byte, error) {
	if w.cfg.Format == FormatSlack {
		return json.Marshal(struct {
			Text string `json:"text"`
		}{ev.Text})
	}
	return json.Marshal(ev)
}

// Send implements Sender: 2xx is delivered; 408, 429 and 5xx are retried;
// any other answer (a 3xx included: redirects are not followed) is
// permanent.
func (w *Webhook) Send(ctx context.Context, ev Event) error {
	body, err := w.Body(ev)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", w.name, ErrPermanent, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w: cannot build the request", w.name, ErrPermanent)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "distscrape-notify/1")
	for k, v := range w.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := w.cfg.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the whole URL, and its path may be the secret
		}
		return fmt.Errorf("%s: %w", w.name, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // reuse the connection
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	msg := fmt.Sprintf("%s: answered %s", w.name, resp.Status)
	if a := strings.TrimSpace(strings.ToValidUTF8(string(answer), "?")); a != "" {
		msg += ": " + a
	}
	switch c := resp.StatusCode; {
	case c == http.StatusRequestTimeout, c == http.StatusTooManyRequests, c >= 500:
		return errors.New(msg)
	}
	return fmt.Errorf("%w: %s", ErrPermanent, msg)
}
