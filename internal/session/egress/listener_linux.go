//go:build linux

package egress

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// SendListener makes the proxy's listening socket in the calling
// process's network namespace (127.0.0.1:ProxyPort; lo must be up) and
// sends it over the unix socket sock, then closes its own copy: the
// socket stays in this namespace wherever its descriptor goes.
func SendListener(sock int) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("proxy socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: ProxyPort, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("proxy bind 127.0.0.1:%d: %w", ProxyPort, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return fmt.Errorf("proxy listen: %w", err)
	}
	if err := unix.Sendmsg(sock, []byte{'L'}, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("proxy handoff: %w", err)
	}
	return nil
}

// ReceiveListener reads the listener SendListener sent over sock. EOF
// (the sender failed, or exec'd without sending) is an error.
func ReceiveListener(sock *os.File) (net.Listener, error) {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("proxy handoff: %w", err)
	}
	if n == 0 {
		return nil, errors.New("proxy handoff: the namespace sent no listener")
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("proxy handoff: no descriptor came")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
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
