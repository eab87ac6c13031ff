package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// dialTimeout bounds the connection to an allowed destination.
const dialTimeout = 15 * time.Second

// headerTimeout bounds how long a client may take to send its request.
const headerTimeout = 30 * time.Second

// Proxy serves one session's listener.
type Proxy struct {
	ln    net.Listener
	rules Rules
	notes io.Writer
	dial  func(network, addr string) (net.Conn, error)

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	refused map[string]bool
	closed  bool
	wg      sync.WaitGroup
}

// Serve answers the peer's requests on ln until Close. Refusals are
// reported to notes (one line per destination; nil discards them).
func Serve(ln net.Listener, rules Rules, notes io.Writer) *Proxy {
	if notes == nil {
		notes = io.Discard
	}
	p := &Proxy{ln: ln, rules: rules, notes: notes, conns: map[net.Conn]struct{}{}, refused: map[string]bool{},
		dial: func(network, addr string) (net.Conn, error) { return net.DialTimeout(network, addr, dialTimeout) }}
	p.wg.Add(1)
	go p.accept()
	return p
}

// Addr is where the proxy listens.
func (p *Proxy) Addr() net.Addr { return p.ln.Addr() }

// Close stops the listener and every connection, and waits for them.
func (p *Proxy) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			c.Close()
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.untrack(c)
			p.serve(c)
		}()
	}
}

// track registers c so that Close can end it; false once closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// serve handles one client connection: one CONNECT tunnel, or one
// plain-HTTP request (the request is sent with Connection: close, so
// the answer ends the exchange).
func (p *Proxy) serve(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(headerTimeout))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		answer(c, http.StatusBadRequest, "loki: not an HTTP proxy request")
		return
	}
	c.SetReadDeadline(time.Time{})
	host, port, ok := destination(req)
	if !ok {
		answer(c, http.StatusBadRequest, "loki: the request names no destination (use an absolute URL or CONNECT host:port)")
		return
	}
	target := net.JoinHostPort(host, strconv.Itoa(port))
	if !p.rules.Allows(host, port) {
		p.refuse(target)
		answer(c, http.StatusForbidden, "loki: egress to "+target+" is not allowed (--allow-host)")
		return
	}
	up, err := p.dial("tcp", target)
	if err != nil {
		answer(c, http.StatusBadGateway, "loki: cannot reach "+target)
		return
	}
	if !p.track(up) {
		up.Close()
		return
	}
	defer p.untrack(up)
	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
		// Bytes the client sent behind its CONNECT are the tunnel's.
		if n := br.Buffered(); n > 0 {
			b, _ := br.Peek(n)
			if _, err := up.Write(b); err != nil {
				return
			}
		}
		pipe(c, up)
		return
	}
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	req.RequestURI = ""
	go func() {
		req.Write(up) // origin form, body included
		closeWrite(up)
	}()
	io.Copy(c, up)
}

// destination is where req wants to go: CONNECT's authority, or the
// absolute URL of a plain request.
func destination(req *http.Request) (string, int, bool) {
	authority, defPort := req.Host, 80
	if req.Method == http.MethodConnect {
		authority, defPort = req.RequestURI, 443
	} else if req.URL == nil || !req.URL.IsAbs() || req.URL.Scheme != "http" {
		return "", 0, false
	} else {
		authority = req.URL.Host
	}
	host, ps, err := net.SplitHostPort(authority)
	if err != nil {
		host, ps = authority, strconv.Itoa(defPort)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 || host == "" {
		return "", 0, false
	}
	return host, port, true
}

func (p *Proxy) refuse(target string) {
	p.mu.Lock()
	first := !p.refused[target]
	p.refused[target] = true
	p.mu.Unlock()
	if first {
		fmt.Fprintf(p.notes, "loki-supervise: egress refused: %s is not in --allow-host\n", target)
	}
}

func answer(c net.Conn, code int, line string) {
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		code, http.StatusText(code), len(line)+1, line)
}

// pipe copies both ways until both directions are done.
func pipe(a, b net.Conn) {
	done := make(chan struct{})
	go func() {
		io.Copy(b, a)
		closeWrite(b)
		close(done)
	}()
	io.Copy(a, b)
	closeWrite(a)
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}
