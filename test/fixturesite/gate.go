package fixturesite

import (
	"net/http"
	"sync"
)

// JSGatePath is a browser page that cannot finish until the test opens
// its gate: its script /js/gate/wait is answered only after OpenGate (or
// when the client gives up), and then an inline script writes
// <p id="gated">JSGateText</p>. A renderer is held mid-page for as long
// as a test needs (to crash its browser), and the page renders once the
// gate is open.
const (
	JSGatePath     = "/js/gate"
	JSGateText     = "Written once the gate opened"
	JSGateWaitPath = "/js/gate/wait"
)

const gateHTML = `<!DOCTYPE html>
<html><head><title>Gate</title></head><body><h1>Gate</h1><div id="box"></div>
<script src="` + JSGateWaitPath + `"></script>
<script>
if (window.gateOpen) {
  const p = document.createElement("p"); p.id = "gated"; p.textContent = "` + JSGateText + `";
  document.getElementById("box").appendChild(p);
}
</script></body></html>
`

// gateState is the gate of JSGatePath: closed until OpenGate.
type gateState struct {
	once sync.Once
	ch   chan struct{}
	open sync.Once
}

func (g *gateState) wait() chan struct{} {
	g.once.Do(func() { g.ch = make(chan struct{}) })
	return g.ch
}

// OpenGate lets every waiting and later request of /js/gate/wait through.
func (s *Site) OpenGate() {
	ch := s.gate.wait()
	s.gate.open.Do(func() { close(ch) })
}

// serveGate serves JSGatePath and its script; false for other paths.
func (s *Site) serveGate(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case JSGatePath:
		w.Header()["Content-Type"] = htmlType
		_, _ = w.Write([]byte(gateHTML))
	case JSGateWaitPath:
		select {
		case <-s.gate.wait():
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write([]byte("window.gateOpen = true;\n"))
		case <-r.Context().Done(): // the client gave up
		}
	default:
		return false
	}
	return true
}
