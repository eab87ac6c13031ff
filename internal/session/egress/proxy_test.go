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
	p := Serve(ln, rules, n)
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
