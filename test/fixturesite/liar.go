package fixturesite

import (
	"net/http"
	"strconv"
	"time"
)

// LyingContentLength is a hostile response: it announces 64 MiB, sends ten
// bytes, one per 100 ms, then closes. A client that reserves the announced
// length before the bytes arrive runs out of memory under a few dozen of
// them; the fetch benchmark and test/badinput both serve it.
func LyingContentLength(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Length", strconv.Itoa(64<<20))
	w.WriteHeader(http.StatusOK)
	for range 10 {
		if _, err := w.Write([]byte("x")); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		time.Sleep(100 * time.Millisecond)
	}
}
