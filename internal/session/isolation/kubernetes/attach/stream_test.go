package attach

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/moby/spdystream"
)

// fakeServer is a streaming server that upgrades one attach, writes out
// on the stdout stream and then ends the way status says: "" drops the
// connection without a status (a cut), anything else is sent as the
// final status.
func fakeServer(t *testing.T, out, status string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: "+protocol+"\r\n\r\n")
		conn, err := spdystream.NewConnection(c, true)
		if err != nil {
			return
		}
		streams := make(chan *spdystream.Stream, 4)
		go conn.Serve(func(s *spdystream.Stream) {
			s.SendReply(http.Header{}, false)
			streams <- s
		})
		byType := map[string]*spdystream.Stream{}
		for len(byType) < 2 {
			s := <-streams
			byType[s.Headers().Get("streamType")] = s
		}
		byType["stdout"].Write([]byte(out))
		byType["stdout"].Close()
		if status != "" {
			byType["error"].Write([]byte(status))
		}
		conn.Close()
	}()
	return "http://" + l.Addr().String() + "/attach/token"
}

// TestStatus: only the server's final Success makes an attach complete;
// a connection that ends without it, or with a failure, is ErrCut.
func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		cut          bool
	}{
		{"success", `{"metadata":{},"status":"Success"}`, false},
		{"failure", `{"metadata":{},"status":"Failure","message":"container gone"}`, true},
		{"dropped", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Dial(context.Background(), fakeServer(t, "hello", tc.status), false, true, false)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, _ := io.ReadAll(s.Stdout)
			err = s.Status()
			if string(got) != "hello" || errors.Is(err, ErrCut) != tc.cut {
				t.Fatalf("stdout %q, status %v; want hello, cut %v", got, err, tc.cut)
			}
		})
	}
}
