//go:build linux

package egress

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session/fdpass"
)

// ReceiveListener reads the listener handoff.SendListener sent over
// sock. EOF (the sender failed, or exec'd without sending) is an error.
func ReceiveListener(sock *os.File) (net.Listener, error) {
	n, fds, err := fdpass.Recv(int(sock.Fd()), make([]byte, 1), 1)
	if err != nil {
		return nil, fmt.Errorf("proxy handoff: %w", err)
	}
	if n == 0 || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		if n == 0 {
			return nil, errors.New("proxy handoff: the namespace sent no listener")
		}
		return nil, errors.New("proxy handoff: no descriptor came")
	}
	f := os.NewFile(uintptr(fds[0]), "egress-proxy")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("proxy handoff: %w", err)
	}
	return ln, nil
}
