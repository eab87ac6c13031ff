//go:build linux

package egress

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// ReceiveListener reads the listener handoff.SendListener sent over
// sock. EOF (the sender failed, or exec'd without sending) is an error.
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
