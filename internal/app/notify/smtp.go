package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"os"
	"strings"
	"time"
)

// SMTPConfig is the e-mail receiver: a relay spoken to with net/smtp.
type SMTPConfig struct {
	Addr     string   // host:port of the relay (587 for submission with STARTTLS)
	From     string   // an address (RFC 5322), "Crawler <crawler@example.org>"
	To       []string // addresses
	Username string   // AUTH PLAIN when set
	Password string
	// StartTLS requires STARTTLS before anything else is sent: a relay that
	// does not offer it is refused, never spoken to in clear.
	StartTLS bool
	// AllowInsecureAuth lets the password go without TLS (StartTLS off):
	// for a relay on the same host only; the config refuses it otherwise.
	AllowInsecureAuth bool
	RootCAs           *x509.CertPool // nil: the system's
	LocalName         string         // the EHLO name; default "localhost"
}

// SMTP sends events by e-mail.
type SMTP struct {
	cfg   SMTPConfig
	host  string
	from  *mail.Address
	to    []*mail.Address
	token string // the base64 AUTH PLAIN blob: hidden from errors like the password
}

// NewSMTP checks cfg and returns the sender.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil || host == "" {
		return nil, fmt.Errorf("notify: email: smtp %q is not host:port", cfg.Addr)
	}
	s := &SMTP{cfg: cfg, host: host}
	if s.from, err = mail.ParseAddress(cfg.From); err != nil {
		return nil, fmt.Errorf("notify: email: from: %w", err)
	}
	if len(cfg.To) == 0 {
		return nil, errors.New("notify: email: no recipient (to)")
	}
	for _, a := range cfg.To {
		addr, err := mail.ParseAddress(a)
		if err != nil {
			return nil, fmt.Errorf("notify: email: to %q: %w", a, err)
		}
		s.to = append(s.to, addr)
	}
	if cfg.Username != "" && !cfg.StartTLS && !cfg.AllowInsecureAuth {
		return nil, errors.New("notify: email: a password without STARTTLS would cross the network in clear")
	}
	if s.cfg.LocalName == "" {
		s.cfg.LocalName = "localhost"
	}
	s.token = base64.StdEncoding.EncodeToString([]byte("\x00" + cfg.Username + "\x00" + cfg.Password))
	return s, nil
}

// Name implements Sender.
func (s *SMTP) Name() string { return "email " + s.cfg.Addr }

// Send implements Sender: one SMTP session per event. A 5xx answer is
// permanent; a missing STARTTLS or AUTH too.
func (s *SMTP) Send(ctx context.Context, ev Event) error {
	if err := s.send(ctx, ev); err != nil {
		msg := strings.ReplaceAll(err.Error(), s.token, "xxxxx")
		if s.cfg.Password != "" {
			msg = strings.ReplaceAll(msg, s.cfg.Password, "xxxxx")
		}
		var te *textproto.Error
		if errors.Is(err, ErrPermanent) || errors.As(err, &te) && te.Code >= 500 {
			return fmt.Errorf("%s: %w: %s", s.Name(), ErrPermanent, msg)
		}
		return fmt.Errorf("%s: %s", s.Name(), msg)
	}
	return nil
}

func (s *SMTP) send(ctx context.Context, ev Event) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() }) // a relay that hangs
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		return s.ctxErr(ctx, err)
	}
	defer c.Close()
	if err := c.Hello(s.cfg.LocalName); err != nil {
		return s.ctxErr(ctx, err)
	}
	if s.cfg.StartTLS {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return fmt.Errorf("%w: the server does not offer STARTTLS (notify.email.starttls is on)", ErrPermanent)
		}
		if err := c.StartTLS(&tls.Config{ServerName: s.host, RootCAs: s.cfg.RootCAs, MinVersion: tls.VersionTLS12}); err != nil {
			return s.ctxErr(ctx, fmt.Errorf("starttls: %w", err))
		}
	}
	if s.cfg.Username != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return fmt.Errorf("%w: the server offers no AUTH, and a username is set", ErrPermanent)
		}
		if err := c.Auth(plainAuth{user: s.cfg.Username, pass: s.cfg.Password, insecure: s.cfg.AllowInsecureAuth}); err != nil {
			return s.ctxErr(ctx, fmt.Errorf("auth: %w", err))
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return s.ctxErr(ctx, err)
	}
	for _, a := range s.to {
		if err := c.Rcpt(a.Address); err != nil {
			return s.ctxErr(ctx, fmt.Errorf("rcpt %s: %w", a.Address, err))
		}
	}
	w, err := c.Data()
	if err != nil {
		return s.ctxErr(ctx, err)
	}
	if _, err := w.Write(s.Message(ev)); err != nil {
		return s.ctxErr(ctx, err)
	}
	if err := w.Close(); err != nil {
		return s.ctxErr(ctx, err)
	}
	return c.Quit()
}

// ctxErr says "timed out" when ctx ended the session: the connection's
// deadline (ctx's) or its closing reads as a network error otherwise.
func (s *SMTP) ctxErr(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%w (%w)", context.DeadlineExceeded, err)
	}
	return err
}

// Message is the e-mail for ev: headers and a quoted-printable UTF-8 body.
func (s *SMTP) Message(ev Event) []byte {
	var b bytes.Buffer
	to := make([]string, len(s.to))
	for i, a := range s.to {
		to[i] = a.String()
	}
	var id [12]byte
	_, _ = rand.Read(id[:])
	header := [][2]string{
		{"From", s.from.String()},
		{"To", strings.Join(to, ", ")},
		{"Subject", mime.QEncoding.Encode("utf-8", oneLine(ev.Subject()))},
		{"Date", ev.Time.Format(time.RFC1123Z)},
		{"Message-ID", "<" + hex.EncodeToString(id[:]) + "@distscrape>"},
		{"MIME-Version", "1.0"},
		{"Content-Type", "text/plain; charset=utf-8"},
		{"Content-Transfer-Encoding", "quoted-printable"},
		{"X-Distscrape-Crawl", oneLine(ev.Crawl)},
		{"X-Distscrape-Event", oneLine(string(ev.Kind))},
	}
	for _, h := range header {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(strings.ReplaceAll(ev.Text, "\n", "\r\n") + "\r\n"))
	_ = qp.Close()
	return b.Bytes()
}

// oneLine keeps a header value on its line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

// plainAuth is AUTH PLAIN (RFC 4616) that refuses a connection without TLS
// unless allowed: net/smtp's PlainAuth would send the password in clear to
// any host named localhost or 127.0.0.1.
type plainAuth struct {
	user, pass string
	insecure   bool
}

func (a plainAuth) Start(si *smtp.ServerInfo) (string, []byte, error) {
	if !si.TLS && !a.insecure {
		return "", nil, fmt.Errorf("%w: refusing to send the password without TLS", ErrPermanent)
	}
	return "PLAIN", []byte("\x00" + a.user + "\x00" + a.pass), nil
}

func (a plainAuth) Next(_ []byte, more bool) ([]byte, error) {
	if more {
		return nil, errors.New("unexpected AUTH PLAIN challenge")
	}
	return nil, nil
}
