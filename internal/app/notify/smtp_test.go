package notify

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/redact"
	"github.com/distscrape/distscrape/internal/testkit/smtptest"
)

const mailPassword = "s3cret-Pass/word#1"

func smtpSender(t *testing.T, srv *smtptest.Server, mod func(*SMTPConfig)) *SMTP {
	t.Helper()
	cfg := SMTPConfig{Addr: srv.Addr(), From: "Crawler <crawler@example.org>", To: []string{"ops@example.org", "Ana <ana@example.org>"},
		Username: "crawler", Password: mailPassword, StartTLS: true, RootCAs: srv.CertPool()}
	if mod != nil {
		mod(&cfg)
	}
	s, err := NewSMTP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSMTPMessage(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{Username: "crawler", Password: mailPassword})
	n := New(fast(smtpSender(t, srv, nil)))
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	n.Notify(DoneEvent("shop", "w1", doneStats, at))
	if c := n.Close(context.Background()); c.Sent != 1 {
		t.Fatalf("counters %+v", c)
	}
	m := srv.Wait(t, 1, time.Minute)[0]
	if !m.TLS || m.User != "crawler" || m.From != "crawler@example.org" || strings.Join(m.To, ",") != "ops@example.org,ana@example.org" {
		t.Errorf("envelope: TLS %v, user %q, from %q, to %q", m.TLS, m.User, m.From, m.To)
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(m.Data)))
	if err != nil {
		t.Fatal(err)
	}
	subj, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	for k, want := range map[string]string{
		"From": `"Crawler" <crawler@example.org>`, "To": `<ops@example.org>, "Ana" <ana@example.org>`,
		"Content-Type": "text/plain; charset=utf-8", "Content-Transfer-Encoding": "quoted-printable",
		"X-Distscrape-Event": "done", "X-Distscrape-Crawl": "shop", "MIME-Version": "1.0",
	} {
		if got := msg.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if subj != "[distscrape] shop: crawl done" {
		t.Errorf("Subject %q", subj)
	}
	if d, err := msg.Header.Date(); err != nil || !d.Equal(at) {
		t.Errorf("Date %v %v", d, err)
	}
	if !strings.HasSuffix(msg.Header.Get("Message-ID"), "@distscrape>") {
		t.Errorf("Message-ID %q", msg.Header.Get("Message-ID"))
	}
	body, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if !strings.HasPrefix(string(body), "Crawl shop is done.\r\n1200 done, 3 dead letters") {
		t.Errorf("body %q", body)
	}
	if strings.Contains(string(m.Data), mailPassword) {
		t.Error("the password is in the message")
	}
}

// A relay that does not offer STARTTLS is never given the password, nor
// the message; neither is a relay whose certificate is not trusted.
func TestSMTPRefusesWithoutTLS(t *testing.T) {
	noTLS := smtptest.Start(t, smtptest.Options{Username: "crawler", Password: mailPassword, NoSTARTTLS: true})
	err := smtpSender(t, noTLS, nil).Send(context.Background(), DoneEvent("shop", "w1", doneStats, time.Now()))
	if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "does not offer STARTTLS") {
		t.Errorf("no STARTTLS: %v", err)
	}
	untrusted := smtptest.Start(t, smtptest.Options{Username: "crawler", Password: mailPassword})
	err = smtpSender(t, untrusted, func(c *SMTPConfig) { c.RootCAs = nil }).Send(context.Background(), DoneEvent("shop", "w1", doneStats, time.Now()))
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}
	// StartTLS off without the insecure flag: refused before any connection.
	if _, err := NewSMTP(SMTPConfig{Addr: noTLS.Addr(), From: "a@example.org", To: []string{"b@example.org"}, Username: "crawler", Password: mailPassword}); err == nil {
		t.Error("a password without STARTTLS nor allow_insecure_auth was accepted")
	}
	for _, srv := range []*smtptest.Server{noTLS, untrusted} {
		if srv.Auths() != 0 || len(srv.Messages()) != 0 {
			t.Errorf("the relay got %d AUTH and %d messages", srv.Auths(), len(srv.Messages()))
		}
	}
	// With the explicit flag, a local relay without TLS takes it.
	s := smtpSender(t, noTLS, func(c *SMTPConfig) { c.StartTLS, c.AllowInsecureAuth = false, true })
	if err := s.Send(context.Background(), DoneEvent("shop", "w1", doneStats, time.Now())); err != nil {
		t.Fatal(err)
	}
	if m := noTLS.Wait(t, 1, time.Minute)[0]; m.TLS || m.User != "crawler" {
		t.Errorf("insecure: %+v", m)
	}
}

// A wrong password is permanent, and its error shows neither the password
// nor the AUTH PLAIN blob that encodes it.
func TestSMTPBadPasswordRedacted(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{Username: "crawler", Password: "another-one"})
	red := redact.New(mailPassword)
	log, lb := newLog(red)
	cfg := fast(smtpSender(t, srv, nil))
	cfg.Logger, cfg.Redact = log, red.String
	n := New(cfg)
	n.Notify(DoneEvent("shop", "w1", doneStats, time.Now()))
	if c := n.Close(context.Background()); c.Failed != 1 || c.Sent != 0 {
		t.Fatalf("counters %+v", c)
	}
	if srv.Auths() != 1 {
		t.Errorf("%d AUTH: a permanent failure was retried", srv.Auths())
	}
	s := smtpSender(t, srv, nil)
	err := s.Send(context.Background(), DoneEvent("shop", "w1", doneStats, time.Now()))
	out := lb.String() + err.Error()
	if !strings.Contains(out, "535") || strings.Contains(out, mailPassword) || strings.Contains(out, s.token) {
		t.Errorf("logs and error:\n%s", out)
	}
}

// A relay that accepts and never answers costs one timeout, not more.
func TestSMTPHangingRelay(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{Hang: true})
	s := smtpSender(t, srv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.Send(ctx, DoneEvent("shop", "w1", doneStats, time.Now()))
	if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "deadline") {
		t.Errorf("hanging relay: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Send returned after %v, its deadline was 200ms", d)
	}
}

func TestNewSMTPRefuses(t *testing.T) {
	ok := SMTPConfig{Addr: "127.0.0.1:587", From: "a@example.org", To: []string{"b@example.org"}, StartTLS: true}
	for name, mod := range map[string]func(*SMTPConfig){
		"no port":      func(c *SMTPConfig) { c.Addr = "127.0.0.1" },
		"no host":      func(c *SMTPConfig) { c.Addr = ":587" },
		"bad from":     func(c *SMTPConfig) { c.From = "not an address" },
		"no to":        func(c *SMTPConfig) { c.To = nil },
		"bad to":       func(c *SMTPConfig) { c.To = []string{"b@example.org", "x@"} },
		"clear passwd": func(c *SMTPConfig) { c.StartTLS, c.Username, c.Password = false, "u", "p" },
	} {
		c := ok
		mod(&c)
		if _, err := NewSMTP(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := NewSMTP(ok); err != nil {
		t.Error(err)
	}
}
