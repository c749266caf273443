package fixturesite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

var (
	// ErrClosed is returned by Start and Pause after Close.
	ErrClosed = errors.New("fixturesite: closed")
	// ErrNotRunning is returned by Pause when the site is not serving.
	ErrNotRunning = errors.New("fixturesite: not serving (not started, or paused)")
)

// Start listens on addr ("127.0.0.1:0" picks a free port), renders the
// site for its address and serves it until Close. It returns the base URL,
// "http://127.0.0.1:PORT".
func (s *Site) Start(addr string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return "", ErrClosed
	case s.addr != "":
		return "", fmt.Errorf("fixturesite: already started on %s", s.addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("fixturesite: listen: %w", err)
	}
	s.addr = ln.Addr().String()
	base := "http://" + s.addr
	s.Render(base)
	s.serve(ln)
	return base, nil
}

// serve starts an http.Server on ln; s.mu is held.
func (s *Site) serve(ln net.Listener) {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	s.srv = srv
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("fixturesite: serve", "err", err)
		}
	}()
}

// Close stops serving: the listener and every connection are closed, and a
// pending Pause never resumes. It is idempotent.
func (s *Site) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stop)
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		return srv.Close()
	}
	return nil
}

// Pause makes the site unreachable for d, then serves again on the same
// address: the listener and every open connection are closed at once
// (clients see connection refused or reset), and a new listener opens after
// d. Pause returns at once; Paused tells when the site is back.
func (s *Site) Pause(d time.Duration) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.srv == nil {
		s.mu.Unlock()
		return ErrNotRunning
	}
	srv := s.srv
	s.srv, s.paused = nil, true
	s.mu.Unlock()
	_ = srv.Close()
	go s.resumeAfter(d)
	return nil
}

// resumeAfter re-listens on the old address after d, retrying for a while
// if the port is briefly unavailable.
func (s *Site) resumeAfter(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.stop:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		ln, err := net.Listen("tcp", s.addr)
		if err == nil {
			s.serve(ln)
			s.paused = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			slog.Error("fixturesite: cannot serve again after a pause", "addr", s.addr, "err", err)
			return
		case <-s.stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Paused reports whether the site is in a Pause.
func (s *Site) Paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}
