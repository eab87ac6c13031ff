package egress

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// upstream is a destination on this host's loopback: an echo service
// for tunnels, an HTTP server for plain requests; it counts connections.
type upstream struct {
	ln      net.Listener
	accepts atomic.Int32
}

func newUpstream(t *testing.T, http bool) *upstream {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.accepts.Add(1)
			go func() {
				defer c.Close()
				if !http {
					io.Copy(c, c)
					return
				}
				req, err := readRequest(c)
				if err != nil {
					return
				}
				body := "path=" + req.URL.Path + " proxy-hdr=" + req.Header.Get("Proxy-Connection")
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			}()
		}
	}()
	return u
}

func readRequest(c net.Conn) (*http.Request, error) { return http.ReadRequest(bufio.NewReader(c)) }

func (u *upstream) port() int { return u.ln.Addr().(*net.TCPAddr).Port }

type notes struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (n *notes) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.b.Write(p)
}

func (n *notes) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.b.String()
}

func startProxy(t *testing.T, allow ...string) (*Proxy, *notes) {
	t.Helper()
	rules, err := Parse(allow)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &notes{}
	p := Serve(ln, rules, n, nil)
	t.Cleanup(func() { p.Close() })
	return p, n
}

func dialProxy(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func TestConnectAllowedTunnels(t *testing.T) {
	up := newUpstream(t, false)
	target := "127.0.0.1:" + strconv.Itoa(up.port())
	p, _ := startProxy(t, target)
	c, br := dialProxy(t, p)
	// The first tunnel bytes ride in the same write as the CONNECT.
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nfirst-", target, target)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT answered %v, %v", resp, err)
	}
	io.WriteString(c, "second\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "first-second\n" {
		t.Fatalf("through the tunnel came %q, %v", line, err)
	}
}

func TestRefusedDestinationIsNeverDialled(t *testing.T) {
	up := newUpstream(t, false)
	p, n := startProxy(t, "127.0.0.1:1") // not up's port
	target := "127.0.0.1:" + strconv.Itoa(up.port())
	for range 2 {
		c, br := dialProxy(t, p)
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "egress to "+target+" is not allowed (--allow-host)") {
			t.Fatalf("refusal = %d %q", resp.StatusCode, body)
		}
	}
	if got := up.accepts.Load(); got != 0 {
		t.Fatalf("the refused destination got %d connections", got)
	}
	if got := n.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "egress refused: "+target+" is not in --allow-host") {
		t.Fatalf("notes = %q, want one line naming %s", got, target)
	}
}

func TestPlainHTTPForwarded(t *testing.T) {
	up := newUpstream(t, true)
	target := "127.0.0.1:" + strconv.Itoa(up.port())
	p, _ := startProxy(t, target)
	c, br := dialProxy(t, p)
	fmt.Fprintf(c, "GET http://%s/some/path HTTP/1.1\r\nHost: %s\r\nProxy-Connection: keep-alive\r\n\r\n", target, target)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "path=/some/path proxy-hdr=" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	// A refused plain request is 403 too.
	c2, br2 := dialProxy(t, p)
	fmt.Fprintf(c2, "GET http://127.0.0.1:1/ HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n")
	if resp, err := http.ReadResponse(br2, nil); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("refused plain request answered %v, %v", resp, err)
	}
}

func TestNotAProxyRequest(t *testing.T) {
	p, _ := startProxy(t, "example.com")
	for _, req := range []string{"GET /relative HTTP/1.1\r\nHost: example.com\r\n\r\n", "garbage\r\n\r\n", "GET ftp://example.com/ HTTP/1.1\r\nHost: x\r\n\r\n"} {
		c, br := dialProxy(t, p)
		io.WriteString(c, req)
		if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%q answered %v, %v", req, resp, err)
		}
	}
}

func TestCloseEndsTunnels(t *testing.T) {
	up := newUpstream(t, false)
	target := "127.0.0.1:" + strconv.Itoa(up.port())
	p, _ := startProxy(t, target)
	c, br := dialProxy(t, p)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", target)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT answered %v, %v", resp, err)
	}
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not end an open tunnel")
	}
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the tunnel still delivers after Close")
	}
	if _, err := net.Dial("tcp", p.Addr().String()); err == nil {
		t.Fatal("the proxy still accepts after Close")
	}
}

// TestHeaderBounded: a header that never ends is cut at maxHeader and
// answered 431; the proxy has read no more than that.
func TestHeaderBounded(t *testing.T) {
	p, _ := startProxy(t, "example.com")
	c, br := dialProxy(t, p)
	go func() {
		io.WriteString(c, "GET http://example.com/ HTTP/1.1\r\nX-Fill: ")
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		for range 64 { // 4 MiB, far past the bound
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("an endless header answered %v, %v", resp, err)
	}
}

// TestConnectionsBounded: past maxConns open at once, a connection is
// answered 503 at once; one slot freed serves again; Close sums it up.
func TestConnectionsBounded(t *testing.T) {
	p, n := startProxy(t, "example.com")
	p.mu.Lock()
	p.maxConns = 3
	p.mu.Unlock()
	var held []net.Conn
	for range 3 {
		c, _ := dialProxy(t, p)
		held = append(held, c)
	}
	waitClients(t, p, 3)
	c, br := dialProxy(t, p)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a connection past the bound answered %v, %v", resp, err)
	}
	c.Close()
	held[0].Close()
	waitClients(t, p, 2)
	c, br = dialProxy(t, p)
	io.WriteString(c, "CONNECT refused.invalid:443 HTTP/1.1\r\n\r\n")
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a connection within the bound answered %v, %v", resp, err)
	}
	p.Close()
	if !strings.Contains(n.String(), "answered 1 connections 503") {
		t.Fatalf("notes %q: want the 503s summed up", n.String())
	}
}

func waitClients(t *testing.T, p *Proxy, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		n := p.clients
		p.mu.Unlock()
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d clients, want %d", n, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestIdleEnds: a client that sends no request, and a tunnel where no
// byte moves, are closed after their timeouts.
func TestIdleEnds(t *testing.T) {
	up := newUpstream(t, false)
	target := "127.0.0.1:" + strconv.Itoa(up.port())
	p, _ := startProxy(t, target)
	p.mu.Lock()
	p.headerTimeout, p.idle = 200*time.Millisecond, 300*time.Millisecond
	p.mu.Unlock()
	_, br := dialProxy(t, p)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a silent client answered %v, %v", resp, err)
	}
	c, br := dialProxy(t, p)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", target)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT answered %v, %v", resp, err)
	}
	// Busy one way only for longer than the idle time: kept.
	for range 6 {
		io.WriteString(c, "x\n")
		if line, err := br.ReadString('\n'); err != nil || line != "x\n" {
			t.Fatalf("echo %q, %v", line, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	start := time.Now()
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("an idle tunnel delivered a byte")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the idle tunnel ended after %v", d)
	}
}

// TestRefusalLinesBounded: each of the first maxNotes destinations gets
// its line once; the rest are counted in one line at Close.
func TestRefusalLinesBounded(t *testing.T) {
	p, n := startProxy(t, "example.com")
	for i := range maxNotes + 5 {
		for range 2 {
			c, br := dialProxy(t, p)
			fmt.Fprintf(c, "CONNECT h%d.invalid:443 HTTP/1.1\r\n\r\n", i)
			if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("answered %v, %v", resp, err)
			}
		}
	}
	p.Close()
	got := n.String()
	if lines := strings.Count(got, "\n"); lines != maxNotes+1 {
		t.Fatalf("notes %q: want %d lines", got, maxNotes+1)
	}
	if !strings.Contains(got, "refused 10 more requests to 5 more destinations") {
		t.Fatalf("notes %q: want the summary of 10 requests to 5 destinations", got)
	}
}
