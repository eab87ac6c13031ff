//go:build linux

package confine

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

// TestNetwork: host shares the host's network (the control case: the
// same probe reaches the host's listeners); loopback is a namespace of its
// own where only 127.0.0.1 of the peer itself answers; none has not even
// that. A UDP datagram (what a DNS query is) must not reach the host
// either.
func TestNetwork(t *testing.T) {
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	var tcpAccepts atomic.Int32
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			tcpAccepts.Add(1)
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	tcpPort := strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)
	udpPort := strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)
	udpGot := func() bool {
		udp.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		buf := make([]byte, 64)
		got := false
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return got
			}
			got = true
		}
	}
	cases := []struct {
		mode     string
		hostTCP  string
		selfTalk string
		hostUDP  bool
	}{
		{"host", "connected", "ok", true},
		{"loopback", "refused", "ok", false},
		{"none", "refused", "refused", false},
	}
	for _, b := range rows() {
		t.Run(b.Name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.mode, func(t *testing.T) {
					self := tc.selfTalk
					if tc.mode == "none" && !strings.HasPrefix(b.Name, "namespace") {
						// crun and runc always bring lo up in a new
						// network namespace (docs/confinement.md).
						self = "ok"
					}
					udpGot()
					accepts := tcpAccepts.Load()
					code, out, stderr := session(t, b, []string{"--network", tc.mode}, netprobe(t, b), tcpPort, udpPort)
					if code != 0 {
						t.Fatalf("exit %d, stderr %q", code, stderr)
					}
					r := results(out)
					if r["host_tcp"] != tc.hostTCP || r["self"] != self {
						t.Errorf("host_tcp=%q self=%q, want %q %q (output %q)", r["host_tcp"], r["self"], tc.hostTCP, self, out)
					}
					if got := tcpAccepts.Load() > accepts; got != (tc.hostTCP == "connected") {
						t.Errorf("the host listener accepted a connection: %v, want %v", got, tc.hostTCP == "connected")
					}
					if got := udpGot(); got != tc.hostUDP {
						t.Errorf("the host's UDP listener got a datagram: %v, want %v", got, tc.hostUDP)
					}
				})
			}
		})
	}
}

var (
	probeOnce sync.Once
	probePath string
	probeErr  error
)

// netprobe builds testdata/netprobe (static) once and returns its path as
// the peer sees it: for the oci backends it is copied into the rootfs.
func netprobe(t *testing.T, b backend) string {
	t.Helper()
	probeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "loki-netprobe-")
		if err != nil {
			probeErr = err
			return
		}
		os.Chmod(dir, 0o755)
		probePath = filepath.Join(dir, "netprobe")
		cmd := exec.Command("go", "build", "-o", probePath, "./testdata/netprobe")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			probeErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if probeErr != nil {
		t.Fatalf("build netprobe: %v", probeErr)
	}
	if strings.HasPrefix(b.Name, "oci") {
		dst := filepath.Join(rootfs(t), "bin", "netprobe")
		if _, err := os.Stat(dst); err != nil {
			testutil.CopyExecutable(t, probePath, filepath.Dir(dst))
		}
		return "/bin/netprobe"
	}
	return probePath
}
