package notify

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/redact"
)

// receiver is a webhook endpoint on loopback that keeps every request.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []request
	added   chan struct{}
	respond func(n int) int // status of the n-th request (1-based); nil: 200
}

type request struct {
	Header http.Header
	Body   []byte
	Path   string
}

func newReceiver(t *testing.T, respond func(n int) int) *receiver {
	r := &receiver{added: make(chan struct{}, 1000), respond: respond}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, request{Header: req.Header.Clone(), Body: body, Path: req.URL.Path})
		n := len(r.reqs)
		r.mu.Unlock()
		status := http.StatusOK
		if r.respond != nil {
			status = r.respond(n)
		}
		w.WriteHeader(status)
		r.added <- struct{}{}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.reqs...)
}

// wait returns once n requests arrived (the test fails after a minute).
func (r *receiver) wait(t *testing.T, n int) []request {
	t.Helper()
	deadline := time.After(time.Minute)
	for len(r.requests()) < n {
		select {
		case <-r.added:
		case <-deadline:
			t.Fatalf("%d webhook requests after a minute, want %d", len(r.requests()), n)
		}
	}
	return r.requests()
}

// events decodes the JSON bodies.
func (r *receiver) events(t *testing.T) []Event {
	t.Helper()
	var out []Event
	for _, req := range r.requests() {
		var ev Event
		if err := json.Unmarshal(req.Body, &ev); err != nil {
			t.Fatalf("body %q: %v", req.Body, err)
		}
		out = append(out, ev)
	}
	return out
}

// logBuffer is a logger into a buffer, redacted as the program's is.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newLog(red *redact.Redactor) (*slog.Logger, *logBuffer) {
	lb := &logBuffer{}
	return slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: red.ReplaceAttr})), lb
}

// fast is a Notifier config that retries quickly.
func fast(senders ...Sender) Config {
	return Config{Senders: senders, Timeout: 2 * time.Second, Backoff: 10 * time.Millisecond}
}
