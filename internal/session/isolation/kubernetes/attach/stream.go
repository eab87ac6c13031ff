package attach

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/moby/spdystream"
)

// protocol is the remote command protocol spoken: the one every kubelet,
// CRI streaming server and API server since Kubernetes 1.4 accepts, with
// a half-closable stdin (SPDY's FIN) and a final status on its own stream.
const protocol = "v4.channel.k8s.io"

// streamTimeout bounds the upgrade and each stream's creation.
const streamTimeout = 30 * time.Second

// Streams are the attach session's streams; nil ones are not asked for
// (they must match the attach request that minted the URL).
type Streams struct {
	conn   *spdystream.Connection
	status *spdystream.Stream
	Stdin  *spdystream.Stream
	Stdout *spdystream.Stream
	Stderr *spdystream.Stream
}

// bufferedConn reads through the reader that parsed the upgrade
// response, which may already hold the first frames.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// Dial opens an attach URL (a CRI streaming server's, http only) and
// creates the streams asked for, status first as the protocol wants.
func Dial(ctx context.Context, rawURL string, stdin, stdout, stderr bool) (*Streams, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" {
		return nil, fmt.Errorf("%w: attach URL %q: want http:// (the CRI streaming server's)", ErrAttach, rawURL)
	}
	ctx, cancel := context.WithTimeout(ctx, streamTimeout)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAttach, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	req, _ := http.NewRequest(http.MethodPost, rawURL, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "SPDY/3.1")
	req.Header.Set("X-Stream-Protocol-Version", protocol)
	br := bufio.NewReader(c)
	if err := req.Write(c); err != nil {
		c.Close()
		return nil, fmt.Errorf("%w: %v", ErrAttach, err)
	}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%w: %v", ErrAttach, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("X-Stream-Protocol-Version") != protocol {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		c.Close()
		return nil, fmt.Errorf("%w: upgrade refused: %s %q", ErrAttach, resp.Status, body)
	}
	c.SetDeadline(time.Time{})
	conn, err := spdystream.NewConnection(bufferedConn{c, br}, false)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%w: %v", ErrAttach, err)
	}
	go conn.Serve(spdystream.NoOpStreamHandler)
	s := &Streams{conn: conn}
	open := func(kind string) (*spdystream.Stream, error) {
		h := http.Header{}
		h.Set("streamType", kind)
		st, err := conn.CreateStream(h, nil, false)
		if err == nil {
			err = st.WaitTimeout(streamTimeout)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s stream: %v", ErrAttach, kind, err)
		}
		return st, nil
	}
	if s.status, err = open("error"); err != nil {
		conn.Close()
		return nil, err
	}
	for _, want := range []struct {
		on   bool
		kind string
		dst  **spdystream.Stream
	}{{stdin, "stdin", &s.Stdin}, {stdout, "stdout", &s.Stdout}, {stderr, "stderr", &s.Stderr}} {
		if !want.on {
			continue
		}
		if *want.dst, err = open(want.kind); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return s, nil
}

// Status reads the server's final status: nil only for the Success it
// sends once the attach ended on its side, after every output byte it
// relayed (the status comes after them on the same connection).
func (s *Streams) Status() error {
	b, err := io.ReadAll(io.LimitReader(s.status, 1<<16))
	if err != nil {
		return fmt.Errorf("%w: status stream: %v", ErrCut, err)
	}
	if len(b) == 0 {
		return fmt.Errorf("%w: the connection ended without the server's final status", ErrCut)
	}
	var st struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("%w: status %q: %v", ErrCut, b, err)
	}
	if st.Status != "Success" {
		return fmt.Errorf("%w: the server ended the attach: %s", ErrCut, st.Message)
	}
	return nil
}

// Closed is closed once the connection is gone.
func (s *Streams) Closed() <-chan bool { return s.conn.CloseChan() }

// Close ends the whole attach session.
func (s *Streams) Close() error { return s.conn.Close() }
