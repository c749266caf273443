package e2e

import (
	"net/http"
	"sort"
	"sync"
)

// statusLog counts the statuses a file server answered, and the paths of
// its 404s.
type statusLog struct {
	mu       sync.Mutex
	n        map[int]int
	notFound map[string]bool
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (l *statusLog) wrap(dir string) http.Handler {
	fs := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		fs.ServeHTTP(rec, r)
		l.mu.Lock()
		l.n[rec.status]++
		if rec.status == http.StatusNotFound {
			l.notFound[r.URL.RequestURI()] = true
		}
		l.mu.Unlock()
	})
}

func (l *statusLog) count(status int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[status]
}

func (l *statusLog) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := 0
	for _, n := range l.n {
		t += n
	}
	return t
}

func (l *statusLog) missing() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for p := range l.notFound {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
