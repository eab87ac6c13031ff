//go:build linux

package sockowner

import (
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestHexAddr(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080": "0100007F:1F90",
		"10.0.2.15:22":   "0F02000A:0016",
		"[::1]:443":      "00000000000000000000000001000000:01BB",
	} {
		if got := hexAddr(netip.MustParseAddrPort(in)); got != want {
			t.Errorf("hexAddr(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestFindsTheClient: a child process connects to a listener of ours;
// its socket names the child, not us (we hold only the accepted end).
func TestFindsTheClient(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "tcp6" {
				addr = "[::1]:0"
			}
			ln, err := net.Listen(network, addr)
			if err != nil {
				t.Skipf("no %s loopback here: %v", network, err)
			}
			defer ln.Close()
			host, port, _ := net.SplitHostPort(ln.Addr().String())
			// bash's /dev/tcp: the child connects and waits for a line.
			cmd := exec.Command("bash", "-c", `exec 3<>/dev/tcp/`+host+`/`+port+`; read -u 3 x`)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			c, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			client := c.RemoteAddr().(*net.TCPAddr).AddrPort()
			pid, comm, err := Find(os.Getpid(), client)
			c.Write([]byte("bye\n"))
			if err != nil {
				t.Fatalf("Find(%v): %v", client, err)
			}
			if pid != cmd.Process.Pid || comm != "bash" {
				t.Errorf("Find = %d %q, want %d bash", pid, comm, cmd.Process.Pid)
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	_, _, err := Find(os.Getpid(), netip.MustParseAddrPort("127.0.0.1:1"))
	if err != ErrNotFound {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if _, _, err := Find(1<<22+7, netip.MustParseAddrPort("127.0.0.1:1")); err == nil || !strings.Contains(err.Error(), strconv.Itoa(1<<22+7)) {
		t.Fatalf("a pid that is not there: err = %v", err)
	}
}
