package dashboard

import (
	"fmt"
	"net/http"
	"time"
)

// state answers the last snapshot.
func (s *Server) state(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	b := s.snap
	s.mu.Unlock()
	if b == nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "no sample yet"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// events streams a snapshot each Interval (Server-Sent Events) until the
// page goes away or the server stops.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	ch := make(chan []byte, 1)
	s.mu.Lock()
	if s.subs == nil { // shut down
		s.mu.Unlock()
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	s.subs[ch] = struct{}{}
	first := s.snap
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.subs != nil {
			delete(s.subs, ch)
		}
		s.mu.Unlock()
	}()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	// A reconnecting page waits one interval, not the browser's 3 s.
	if _, err := fmt.Fprintf(w, "retry: %d\n\n", max(s.cfg.Interval.Milliseconds(), 500)); err != nil {
		return
	}
	if first != nil {
		if err := send(w, first); err != nil {
			return
		}
	}
	if rc.Flush() != nil {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case b, ok := <-ch:
			if !ok {
				return
			}
			_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if send(w, b) != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

func send(w http.ResponseWriter, b []byte) error {
	_, err := fmt.Fprintf(w, "data: %s\n\n", b) // JSON has no raw newline
	return err
}

// closeSubs ends every event stream (the server is stopping).
func (s *Server) closeSubs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.subs {
		close(ch)
	}
	s.subs = nil
}
