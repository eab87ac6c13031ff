//go:build linux

package session

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// directBackends pass the client's own descriptors to the peer (no relay,
// no forwarder) when they are pipes or sockets.
func directBackends() []backend { return []backend{get("namespace"), get("oci-crun")} }

// TestDirectStdio: with pipes on the client's side, the peer holds the
// client's own pipes (and with --relay it does not), and the outcomes the
// forwarders used to observe are still observed: a reader that goes away
// is 125 output-lost, output held by something the peer left behind is 125
// output-held, and a clean run is the peer's code with its bytes exact.
// (The EOF rule is TestEOFRuleSaysWhatItCut, byte exactness
// TestRelayByteExact: both run in this mode too.)
func TestDirectStdio(t *testing.T) {
	for _, b := range directBackends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Run("the peer has the client's pipes", func(t *testing.T) {
				for _, relay := range []bool{false, true} {
					var flags []string
					if relay {
						flags = []string{"--relay"}
					}
					r, w, err := os.Pipe()
					if err != nil {
						t.Fatal(err)
					}
					out, outW, err := os.Pipe()
					if err != nil {
						t.Fatal(err)
					}
					want := fmt.Sprintf("pipe:[%d]\npipe:[%d]\n", inode(t, r), inode(t, out))
					cmd := supervise(t, b, flags, "sh", "-c", "readlink /proc/self/fd/0; readlink /proc/self/fd/1")
					cmd.Stdin, cmd.Stdout = r, outW
					var stderr syncBuffer
					cmd.Stderr = &stderr
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					r.Close()
					outW.Close()
					w.Close()
					got, _ := io.ReadAll(out)
					n := len(got)
					if code := testutil.WaitExit(t, cmd, generous); code != 0 {
						t.Fatalf("exit %d, stderr %q", code, stderr.String())
					}
					if same := string(got[:n]) == want; same == relay {
						t.Fatalf("relay %v: the peer's fd 0 and 1 are %q; the client's are %q", relay, got[:n], want)
					}
				}
			})
			t.Run("a reader that goes away is lost output", func(t *testing.T) {
				cmd := supervise(t, b, nil, "sh", "-c", "trap '' PIPE; echo first; while :; do echo y || sleep 0.01; done")
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				var stderr syncBuffer
				cmd.Stderr = &stderr
				stdin, _ := cmd.StdinPipe()
				defer stdin.Close()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				buf := make([]byte, 6)
				if _, err := out.Read(buf); err != nil || string(buf) != "first\n" {
					t.Fatalf("first read %q %v", buf, err)
				}
				out.Close()
				if code := testutil.WaitExit(t, cmd, generous); code != 125 || !strings.Contains(stderr.String(), "output-lost") {
					t.Fatalf("exit %d, stderr %q: want 125 output-lost", code, stderr.String())
				}
			})
			t.Run("output held after the peer exited", func(t *testing.T) {
				r := run(t, supervise(t, b, nil, "sh", "-c", "sleep 30 & echo done"), "", generous)
				if r.code != 125 || !strings.Contains(r.stderr, "output-held") || r.stdout != "done\n" {
					t.Fatalf("exit %d, stdout %q, stderr %q: want 125 output-held", r.code, r.stdout, r.stderr)
				}
			})
			t.Run("a clean run", func(t *testing.T) {
				r := run(t, supervise(t, b, []string{"--wait-after-eof"}, "sh", "-c", "cat; echo to-stderr >&2; exit 7"), "line one\nline two\n", generous)
				if r.code != 7 || r.stdout != "line one\nline two\n" || r.stderr != "to-stderr\n" {
					t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
				}
			})
		})
	}
}

func inode(t *testing.T, f *os.File) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}
