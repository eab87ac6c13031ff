package egress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The proxy runs in the supervisor, outside every limit of the session,
// and the peer drives it: each bound below keeps what one session can
// make it hold small and fixed, whatever the peer sends.
const (
	// dialTimeout bounds the connection to an allowed destination.
	dialTimeout = 15 * time.Second
	// headerTimeout bounds how long a client may take to send its
	// request line and headers.
	headerTimeout = 10 * time.Second
	// maxHeader bounds the request line and headers together; a longer
	// one is answered 431 and the connection closed.
	maxHeader = 64 << 10
	// maxConns bounds the peer's connections open at once; one more is
	// answered 503 and closed before anything is read from it.
	maxConns = 256
	// idleTimeout ends a tunnel or forwarded request that moved no byte
	// either way for this long (a model that thinks for minutes before
	// it answers a non-streamed request still fits).
	idleTimeout = 10 * time.Minute
	// maxNotes refusal lines go to the notes as they happen; the others
	// are counted and summed up in one line at Close.
	maxNotes = 10
	// maxRefused bounds the distinct destinations remembered for that.
	maxRefused = 4096
	// maxHost is the longest host name a request may name (DNS's 253,
	// plus room for an IPv6 literal's brackets and zone).
	maxHost = 255
)

// errHeaderTooLarge: the client sent more than maxHeader bytes without
// ending its headers.
var errHeaderTooLarge = errors.New("request header too large")

// Proxy serves one session's listener.
type Proxy struct {
	ln    net.Listener
	rules Rules
	notes io.Writer
	dial  func(network, addr string) (net.Conn, error)
	// bounds, the constants above (tests shorten them)
	maxConns            int
	headerTimeout, idle time.Duration

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	clients int
	observe func(target string, client netip.AddrPort)
	refused map[string]bool // destination refused: true once its line is written
	noted   int             // refusal lines written
	// quiet counts refusals not written: requests, and destinations
	// (those beyond maxRefused all count as new).
	quietRequests, quietDests int
	overflow                  int // connections answered 503
	closed                    bool
	wg                        sync.WaitGroup
}

// Serve answers the peer's requests on ln until Close. Refusals are
// reported to notes (a line for each of the first destinations, then a
// summary at Close; nil discards them) and, every one of them, to
// observe (nil: none) with the client's address, which it may take a
// moment to look up (the client waits for its answer meanwhile) but
// must not block on.
func Serve(ln net.Listener, rules Rules, notes io.Writer, observe func(target string, client netip.AddrPort)) *Proxy {
	if notes == nil {
		notes = io.Discard
	}
	if observe == nil {
		observe = func(string, netip.AddrPort) {}
	}
	p := &Proxy{ln: ln, rules: rules, notes: notes, observe: observe, conns: map[net.Conn]struct{}{}, refused: map[string]bool{},
		dial:     func(network, addr string) (net.Conn, error) { return net.DialTimeout(network, addr, dialTimeout) },
		maxConns: maxConns, headerTimeout: headerTimeout, idle: idleTimeout}
	p.wg.Add(1)
	go p.accept()
	return p
}

// Addr is where the proxy listens.
func (p *Proxy) Addr() net.Addr { return p.ln.Addr() }

// Close stops the listener and every connection, waits for them, and
// writes the summary of what was refused without a line of its own.
func (p *Proxy) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	already := p.closed
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	if !already {
		p.summary()
	}
	return err
}

func (p *Proxy) summary() {
	if p.quietRequests > 0 {
		fmt.Fprintf(p.notes, "loki-supervise: egress refused %d more requests to %d more destinations not in --allow-host (only the first %d are named)\n",
			p.quietRequests, p.quietDests, maxNotes)
	}
	if p.overflow > 0 {
		fmt.Fprintf(p.notes, "loki-supervise: egress proxy answered %d connections 503: more than %d open at once\n", p.overflow, p.maxConns)
	}
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			var ne net.Error
			if !closed && errors.As(err, &ne) && ne.Timeout() || !closed && isTemporary(err) {
				// Out of descriptors for a moment: the connections
				// held end by their deadlines; keep serving.
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return
		}
		switch p.admit(c) {
		case admitClosed:
			c.Close()
			return
		case admitFull:
			// Answered without reading: nothing of it is held.
			c.SetWriteDeadline(time.Now().Add(time.Second))
			answer(c, http.StatusServiceUnavailable, "loki: too many connections to the egress proxy at once")
			c.Close()
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.release(c)
			p.serve(c)
		}()
	}
}

// isTemporary: accept failed for want of descriptors or memory.
func isTemporary(err error) bool {
	var se interface{ Temporary() bool }
	return errors.As(err, &se) && se.Temporary()
}

type admission int

const (
	admitted admission = iota
	admitFull
	admitClosed
)

// admit registers a client connection, within maxConns.
func (p *Proxy) admit(c net.Conn) admission {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return admitClosed
	case p.clients >= p.maxConns:
		p.overflow++
		return admitFull
	}
	p.clients++
	p.conns[c] = struct{}{}
	return admitted
}

func (p *Proxy) release(c net.Conn) {
	p.untrack(c)
	p.mu.Lock()
	p.clients--
	p.mu.Unlock()
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

// headerLimit passes at most n bytes, then fails with errHeaderTooLarge
// until lifted (n < 0): the request's body is the destination's affair.
type headerLimit struct {
	r io.Reader
	n int
}

func (l *headerLimit) Read(b []byte) (int, error) {
	if l.n < 0 {
		return l.r.Read(b)
	}
	if l.n == 0 {
		return 0, errHeaderTooLarge
	}
	if len(b) > l.n {
		b = b[:l.n]
	}
	n, err := l.r.Read(b)
	l.n -= n
	return n, err
}

// serve handles one client connection: one CONNECT tunnel, or one
// plain-HTTP request (the request is sent with Connection: close, so
// the answer ends the exchange).
func (p *Proxy) serve(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(p.headerTimeout))
	lim := &headerLimit{r: c, n: maxHeader}
	br := bufio.NewReader(lim)
	req, err := http.ReadRequest(br)
	if errors.Is(err, errHeaderTooLarge) {
		answer(c, http.StatusRequestHeaderFieldsTooLarge, fmt.Sprintf("loki: request header larger than %d KiB", maxHeader>>10))
		return
	}
	if err != nil {
		answer(c, http.StatusBadRequest, "loki: not an HTTP proxy request")
		return
	}
	lim.n = -1
	c.SetReadDeadline(time.Time{})
	host, port, ok := destination(req)
	if !ok {
		answer(c, http.StatusBadRequest, "loki: the request names no destination (use an absolute URL or CONNECT host:port)")
		return
	}
	target := net.JoinHostPort(host, strconv.Itoa(port))
	if !p.rules.Allows(host, port) {
		p.refuse(target, c.RemoteAddr())
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
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
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
		p.pipe(c, up, c, &last)
		return
	}
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	req.RequestURI = ""
	// The body comes through br (its first bytes may be buffered there).
	r, w := io.Pipe()
	defer r.Close() // a writer still at it gets an error, not a wait
	go func() {
		w.CloseWithError(req.Write(w)) // origin form, body included
	}()
	p.pipe(c, up, r, &last)
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
	if err != nil || port < 1 || port > 65535 || host == "" || len(host) > maxHost {
		return "", 0, false
	}
	return host, port, true
}

// refuse notes a refusal: a line for each of the first maxNotes
// destinations (once each), a count for the rest, summed up at Close.
func (p *Proxy) refuse(target string, client net.Addr) {
	var ap netip.AddrPort
	if a, ok := client.(*net.TCPAddr); ok {
		ap = a.AddrPort()
	}
	p.observe(target, ap)
	p.mu.Lock()
	noted, seen := p.refused[target]
	line := false
	switch {
	case seen && noted:
	case seen:
		p.quietRequests++
	case p.noted < maxNotes:
		p.noted++
		p.refused[target] = true
		line = true
	default:
		p.quietRequests++
		p.quietDests++
		if len(p.refused) < maxRefused {
			p.refused[target] = false
		}
	}
	p.mu.Unlock()
	if line {
		fmt.Fprintf(p.notes, "loki-supervise: egress refused: %s is not in --allow-host\n", target)
	}
}

func answer(c net.Conn, code int, line string) {
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		code, http.StatusText(code), len(line)+1, line)
}

// pipe copies the client's bytes (read from cr: c itself, or the
// request being forwarded) to up and up's to c, until both directions
// are done or neither moved a byte for p.idle.
func (p *Proxy) pipe(c, up net.Conn, cr io.Reader, last *atomic.Int64) {
	done := make(chan struct{})
	go func() {
		p.copy(up, cr, c, last)
		closeWrite(up)
		close(done)
	}()
	p.copy(c, up, up, last)
	closeWrite(c)
	<-done
}

// copyBuffer is what each direction of a tunnel holds (a splice would
// hold none, but could not tell an idle tunnel from a busy one).
const copyBuffer = 16 << 10

// copy moves bytes from src (whose reads from is bounded by deadlines)
// to dst until EOF, an error, or p.idle without a byte either way (last
// is shared by both directions of the exchange).
func (p *Proxy) copy(dst net.Conn, src io.Reader, from net.Conn, last *atomic.Int64) {
	buf := make([]byte, copyBuffer)
	for {
		from.SetReadDeadline(time.Now().Add(p.idle))
		n, err := src.Read(buf)
		if n > 0 {
			last.Store(time.Now().UnixNano())
			dst.SetWriteDeadline(time.Now().Add(p.idle))
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && time.Since(time.Unix(0, last.Load())) < p.idle {
				continue // the other direction is busy
			}
			return
		}
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}
