package chaos

import (
	"bytes"
	"net"
	"sync"
)

// relay is a TCP relay on loopback between Redis clients (a replica among
// them) and a master. It can stall the replication links that cross it:
// what the master sends them stays in the relay, and is dropped at Close,
// as a lagging network would lose it when the master dies.
type relay struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	stalled bool
	resume  chan struct{} // closed when the stall ends (or the relay closes)
	conns   map[net.Conn]bool
	closed  bool
}

func startRelay(target string) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &relay{ln: ln, target: target, conns: map[net.Conn]bool{}, resume: make(chan struct{})}
	go r.accept()
	return r, nil
}

func (r *relay) port() int { return r.ln.Addr().(*net.TCPAddr).Port }

func (r *relay) accept() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", r.target)
		if err != nil {
			c.Close()
			continue
		}
		if !r.track(c, up) {
			return
		}
		repl := &replFlag{}
		go r.pipe(up, c, repl, true)
		go r.pipe(c, up, repl, false)
	}
}

// track remembers a pair of connections for Close; false once closed.
func (r *relay) track(cs ...net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		r.conns[c] = true
	}
	return true
}

// replFlag marks a connection as a replication link: its client sent PSYNC.
type replFlag struct {
	mu  sync.Mutex
	yes bool
	n   int // bytes of the client's stream looked at
}

func (f *replFlag) see(b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.yes && f.n < 1<<16 {
		f.yes = bytes.Contains(bytes.ToUpper(b), []byte("PSYNC"))
		f.n += len(b)
	}
}

func (f *replFlag) is() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.yes
}

// pipe copies src to dst; fromClient says src is the client's side. A
// replication link waits, both ways, while the relay is stalled.
func (r *relay) pipe(dst, src net.Conn, repl *replFlag, fromClient bool) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if fromClient {
				repl.see(buf[:n])
			}
			if repl.is() && !r.wait() {
				return // closed while stalled: what was read is dropped
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // io.EOF or a closed connection: both sides go
			return
		}
	}
}

// wait blocks while the relay is stalled; false when it closed.
func (r *relay) wait() bool {
	r.mu.Lock()
	stalled, resume, closed := r.stalled, r.resume, r.closed
	r.mu.Unlock()
	if closed {
		return false
	}
	if !stalled {
		return true
	}
	<-resume
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.closed
}

// stall stops the replication links until Close.
func (r *relay) stall() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stalled = true
}

// Close drops every connection and what a stalled link holds.
func (r *relay) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	close(r.resume)
	conns := r.conns
	r.mu.Unlock()
	r.ln.Close()
	for c := range conns {
		c.Close()
	}
}
