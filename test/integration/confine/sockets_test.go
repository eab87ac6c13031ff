//go:build linux

package confine

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/landlock"
	"github.com/loki-sh/loki/internal/testutil"
)

func listenUnix(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// TestHostSocketsOutOfReach: a read-only mount does not stop connect(2),
// so a uid-0 peer of a confined session could reach a daemon's socket
// under /run (dockerd's: a privileged container, host root). Confined
// sessions cover the host's pathname sockets, and (Landlock ABI >= 6,
// with the host's network) keep the peer to its own abstract sockets;
// --fs host is the control case, where both answer.
func TestHostSocketsOutOfReach(t *testing.T) {
	var b [6]byte
	rand.Read(b[:])
	dir, err := os.MkdirTemp("/run", "loki-confine-sock-")
	if err != nil {
		t.Skipf("cannot make a dir in /run: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "daemon.sock")
	listenUnix(t, path)
	os.Chmod(path, 0o777) // only the mask may refuse, for uid 0 and for nobody
	abstract := "@loki-confine-" + hex.EncodeToString(b[:])
	listenUnix(t, abstract)
	scoped := landlock.ABI() >= 6
	for _, be := range rows() {
		if !strings.HasPrefix(be.Name, "namespace") {
			continue
		}
		for _, tc := range []struct {
			flags              []string
			pathname, abstract string
		}{
			{nil, "refused", map[bool]string{true: "refused", false: "connected"}[scoped]},
			{[]string{"--network", "loopback"}, "refused", "refused"},
			{[]string{"--fs", "host"}, "connected", "connected"},
			{[]string{"--write", dir}, "connected", map[bool]string{true: "refused", false: "connected"}[scoped]},
		} {
			t.Run(be.Name+"/"+strings.Join(tc.flags, "="), func(t *testing.T) {
				code, out, stderr := session(t, be, tc.flags, netprobe(t, be), "unix", path, abstract)
				if code != 0 {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				r := results(out)
				if r["unix0"] != tc.pathname || r["unix1"] != tc.abstract {
					t.Errorf("pathname %q, abstract %q; want %q, %q (Landlock scope %v)", r["unix0"], r["unix1"], tc.pathname, tc.abstract, scoped)
				}
			})
		}
	}
}

// TestOCIAbstractSocketsOutOfReach: on oci the peer runs on the host's
// network too, where the host's abstract sockets answered (issue 33: runc
// with --userns host reached them); loki-init now gives the peer the same
// Landlock scope as the namespace backend (-scope-abstract-unix, from the
// config). With --network loopback the runtime's network namespace
// isolates them by itself. Docker's network is always a namespace of the
// container's own.
func TestOCIAbstractSocketsOutOfReach(t *testing.T) {
	testutil.RequireLandlock(t, 6) // the abstract socket scope
	var b [6]byte
	rand.Read(b[:])
	abstract := "@loki-confine-oci-" + hex.EncodeToString(b[:])
	listenUnix(t, abstract)
	for _, be := range rows() {
		if !strings.HasPrefix(be.Name, "oci") {
			continue
		}
		for _, flags := range [][]string{nil, {"--userns", "host"}, {"--network", "loopback"}} {
			t.Run(be.Name+"/"+strings.Join(flags, "="), func(t *testing.T) {
				code, out, stderr := session(t, be, flags, netprobe(t, be), "unix", abstract)
				if code != 0 {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
				if got := results(out)["unix0"]; got != "refused" {
					t.Errorf("the host's abstract socket: %q, want refused", got)
				}
			})
		}
	}
}
