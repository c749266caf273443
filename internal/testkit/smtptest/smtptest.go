// Package smtptest is a minimal SMTP server on loopback for tests: EHLO,
// STARTTLS with a self-signed certificate made at start, AUTH PLAIN, MAIL,
// RCPT and DATA, keeping every message it accepted. It is a real server on
// a real socket, so a client is tested the way it meets a mail relay. It
// can also refuse to offer STARTTLS or hang (accept and never answer), the
// ways a relay goes wrong.
package smtptest

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options shape the server.
type Options struct {
	// Username and Password, when set, are required (AUTH PLAIN) before
	// MAIL; AUTH is offered only after STARTTLS.
	Username, Password string
	// NoSTARTTLS: the server does not offer STARTTLS (a relay that would
	// take a password in clear).
	NoSTARTTLS bool
	// Hang: the server accepts connections and never answers.
	Hang bool
}

// Message is one message the server accepted.
type Message struct {
	From string
	To   []string
	Data []byte // as sent, dot-unstuffed, CRLF line ends
	TLS  bool   // the session had done STARTTLS
	User string // the AUTH PLAIN user, "" without AUTH
}

// Server is a running server; Start stops it with the test.
type Server struct {
	opts    Options
	ln      net.Listener
	tls     *tls.Config
	certPEM []byte

	mu    sync.Mutex
	msgs  []Message
	auths int // AUTH commands received, good or bad
	conns map[net.Conn]bool
	wg    sync.WaitGroup
	added chan struct{} // closed and replaced at each message
}

// Limits: a line and a message a test sends are far below them.
const (
	maxLine    = 64 << 10
	maxMessage = 8 << 20
)

// Start listens on 127.0.0.1 and serves until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	cert, certPEM, err := selfSigned()
	if err != nil {
		t.Fatalf("smtptest: certificate: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	s := &Server{opts: opts, ln: ln, certPEM: certPEM, conns: map[net.Conn]bool{}, added: make(chan struct{}),
		tls: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// CertPool trusts the server's certificate.
func (s *Server) CertPool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(s.certPEM)
	return p
}

// CAFile writes the server's certificate (PEM) into a file of the test's
// temporary directory and returns its path.
func (s *Server) CAFile(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "smtptest-ca.pem")
	if err := os.WriteFile(p, s.certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Messages returns the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Auths counts the AUTH commands received (a client that must not send
// its password sends none).
func (s *Server) Auths() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auths
}

// Wait returns once n messages arrived, failing the test after timeout.
func (s *Server) Wait(t testing.TB, n int, timeout time.Duration) []Message {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		msgs, added := append([]Message(nil), s.msgs...), s.added
		s.mu.Unlock()
		if len(msgs) >= n {
			return msgs
		}
		select {
		case <-added:
		case <-deadline.C:
			t.Fatalf("smtptest: %d messages after %v, want %d", len(msgs), timeout, n)
		}
	}
}

// Close stops the server and every session.
func (s *Server) Close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			if s.opts.Hang {
				_, _ = c.Read(make([]byte, 1)) // until the client or Close gives up
				return
			}
			s.session(c)
		}()
	}
}

// session is one SMTP conversation (RFC 5321, the subset a client of
// net/smtp uses).
type session struct {
	s    *Server
	c    net.Conn
	r    *bufio.Reader
	tls  bool
	user string
	msg  *Message
}

func (s *Server) session(c net.Conn) {
	ss := &session{s: s, c: c, r: bufio.NewReader(c)}
	ss.reply("220 smtptest ESMTP")
	for {
		line, err := ss.line()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO", "HELO":
			ext := []string{"smtptest"}
			if !ss.tls && !s.opts.NoSTARTTLS {
				ext = append(ext, "STARTTLS")
			}
			if ss.tls || s.opts.NoSTARTTLS {
				ext = append(ext, "AUTH PLAIN")
			}
			ext = append(ext, "8BITMIME")
			for i, e := range ext {
				sep := "-"
				if i == len(ext)-1 {
					sep = " "
				}
				ss.reply("250" + sep + e)
			}
		case "STARTTLS":
			if ss.tls || s.opts.NoSTARTTLS {
				ss.reply("502 5.5.1 not offered")
				continue
			}
			ss.reply("220 2.0.0 ready")
			tc := tls.Server(c, s.tls)
			if err := tc.Handshake(); err != nil {
				return
			}
			ss.c, ss.r, ss.tls, ss.user, ss.msg = tc, bufio.NewReader(tc), true, "", nil
		case "AUTH":
			ss.auth(arg)
		case "MAIL":
			if s.opts.Username != "" && ss.user == "" {
				ss.reply("530 5.7.0 authentication required")
				continue
			}
			ss.msg = &Message{From: addrArg(arg, "FROM:"), TLS: ss.tls, User: ss.user}
			ss.reply("250 2.1.0 ok")
		case "RCPT":
			if ss.msg == nil {
				ss.reply("503 5.5.1 MAIL first")
				continue
			}
			ss.msg.To = append(ss.msg.To, addrArg(arg, "TO:"))
			ss.reply("250 2.1.5 ok")
		case "DATA":
			if ss.msg == nil || len(ss.msg.To) == 0 {
				ss.reply("503 5.5.1 RCPT first")
				continue
			}
			if !ss.data() {
				return
			}
		case "RSET":
			ss.msg = nil
			ss.reply("250 2.0.0 ok")
		case "NOOP":
			ss.reply("250 2.0.0 ok")
		case "QUIT":
			ss.reply("221 2.0.0 bye")
			return
		default:
			ss.reply("502 5.5.2 unknown command")
		}
	}
}

func (ss *session) reply(line string) { _, _ = ss.c.Write([]byte(line + "\r\n")) }

func (ss *session) line() (string, error) {
	var b []byte
	for {
		part, isPrefix, err := ss.r.ReadLine()
		if err != nil {
			return "", err
		}
		if b = append(b, part...); len(b) > maxLine {
			return "", errors.New("line too long")
		}
		if !isPrefix {
			return string(b), nil
		}
	}
}

func (ss *session) auth(arg string) {
	ss.s.mu.Lock()
	ss.s.auths++
	ss.s.mu.Unlock()
	mech, initial, _ := strings.Cut(arg, " ")
	if !strings.EqualFold(mech, "PLAIN") {
		ss.reply("504 5.5.4 only PLAIN")
		return
	}
	if initial == "" {
		ss.reply("334 ")
		l, err := ss.line()
		if err != nil {
			return
		}
		initial = l
	}
	raw, err := base64.StdEncoding.DecodeString(initial)
	parts := strings.Split(string(raw), "\x00")
	if err != nil || len(parts) != 3 || parts[1] != ss.s.opts.Username || parts[2] != ss.s.opts.Password || ss.s.opts.Username == "" {
		ss.reply("535 5.7.8 authentication failed")
		return
	}
	ss.user = parts[1]
	ss.reply("235 2.7.0 authenticated")
}

// data reads a message up to its lone ".", dot-unstuffed; false when the
// connection broke.
func (ss *session) data() bool {
	ss.reply("354 end with <CRLF>.<CRLF>")
	var buf bytes.Buffer
	for {
		l, err := ss.line()
		if err != nil {
			return false
		}
		if l == "." {
			break
		}
		l = strings.TrimPrefix(l, ".")
		if buf.Len()+len(l) > maxMessage {
			ss.reply("552 5.3.4 message too big")
			return false
		}
		buf.WriteString(l + "\r\n")
	}
	m := *ss.msg
	m.Data = buf.Bytes()
	ss.msg = nil
	ss.s.mu.Lock()
	ss.s.msgs = append(ss.s.msgs, m)
	close(ss.s.added)
	ss.s.added = make(chan struct{})
	ss.s.mu.Unlock()
	ss.reply("250 2.0.0 queued")
	return true
}

// addrArg is the address of "FROM:<a@b>" (parameters after it dropped).
func addrArg(arg, prefix string) string {
	if len(arg) >= len(prefix) && strings.EqualFold(arg[:len(prefix)], prefix) {
		arg = arg[len(prefix):]
	}
	arg, _, _ = strings.Cut(strings.TrimSpace(arg), " ")
	return strings.Trim(arg, "<>")
}

// selfSigned makes a certificate for 127.0.0.1, ::1 and localhost that is
// its own CA, valid for a day.
func selfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "smtptest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, certPEM, nil
}
