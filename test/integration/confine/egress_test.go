//go:build linux

package confine

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

// TestEgressAllowlist: with --allow-host the peer's only way out is the
// session's proxy. curl inside (the proxy comes from HTTP_PROXY, which
// the session sets) fetches from an allowed destination on the host,
// plainly and through a CONNECT tunnel; a destination the list does not
// name gets 403 and never sees a connection, and the supervisor says so
// once; going around the proxy reaches nothing. Backends without the
// proxy refuse the flag with one line.
func TestEgressAllowlist(t *testing.T) {
	curl := testutil.RequireCommand(t, "curl")
	var allowedHits, deniedHits atomic.Int32
	serve := func(hits *atomic.Int32, body string) int {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			fmt.Fprint(w, body)
		})}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return ln.Addr().(*net.TCPAddr).Port
	}
	allowed := strconv.Itoa(serve(&allowedHits, "allowed-body"))
	denied := strconv.Itoa(serve(&deniedHits, "denied-body"))
	// --noproxy '' : 127.0.0.1 is in NO_PROXY (the session's own
	// listeners stay direct), so curl is told to use the proxy anyway.
	script := `c() { ` + curl + ` -sS --noproxy '' --max-time 20 "$@"; }
echo "proxy=$HTTPS_PROXY"
echo "plain=$(c http://127.0.0.1:` + allowed + `/)"
echo "tunnel=$(c -p http://127.0.0.1:` + allowed + `/)"
echo "denied=$(c http://127.0.0.1:` + denied + `/)"
echo "denied_tunnel=$(c -p http://127.0.0.1:` + denied + `/ 2>&1 | tr -d '\n')"
` + curl + ` -sS --noproxy '*' --max-time 5 http://127.0.0.1:` + allowed + `/ >/dev/null 2>&1; echo "direct=$?"
`
	for _, b := range rows() {
		t.Run(b.Name, func(t *testing.T) {
			a0, d0 := allowedHits.Load(), deniedHits.Load()
			code, out, stderr := session(t, b, []string{"--allow-host", "127.0.0.1:" + allowed, "--allow-host", "*.example.org"}, "/bin/sh", "-c", script)
			if !strings.HasPrefix(b.Name, "namespace") {
				if code != 127 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "--allow-host") {
					t.Fatalf("exit %d, stderr %q: want 127 and one line refusing --allow-host", code, stderr)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
			}
			r := results(out)
			want := map[string]string{
				"proxy": "http://127.0.0.1:3128", "plain": "allowed-body", "tunnel": "allowed-body",
				"denied": "loki: egress to 127.0.0.1:" + denied + " is not allowed (--allow-host)",
				"direct": "7", // couldn't connect: the session's loopback has no such listener
			}
			for k, v := range want {
				if r[k] != v {
					t.Errorf("%s = %q, want %q (stdout %q)", k, r[k], v, out)
				}
			}
			if !strings.Contains(r["denied_tunnel"], "403") {
				t.Errorf("denied tunnel: %q, want curl's 403", r["denied_tunnel"])
			}
			if got := allowedHits.Load() - a0; got != 2 {
				t.Errorf("the allowed server got %d requests, want 2 (plain, tunnel)", got)
			}
			if got := deniedHits.Load() - d0; got != 0 {
				t.Errorf("the denied server got %d requests", got)
			}
			if n := strings.Count(stderr, "egress refused: 127.0.0.1:"+denied+" is not in --allow-host"); n != 1 {
				t.Errorf("stderr %q: want the refusal noted once", stderr)
			}
		})
	}
}

// TestAllowHostFlags: --allow-host with another network, or a value
// that is not a destination, is a usage error before anything starts.
func TestAllowHostFlags(t *testing.T) {
	b := backends.Get("namespace")
	for _, flags := range [][]string{
		{"--allow-host", "example.com", "--network", "host"},
		{"--allow-host", "example.com", "--network", "none"},
		{"--allow-host", "http://example.com"},
		{"--allow-host", "*.com"},
	} {
		code, _, stderr := session(t, b, flags, "/bin/true")
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "allow-host") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", flags, code, stderr)
		}
	}
}
