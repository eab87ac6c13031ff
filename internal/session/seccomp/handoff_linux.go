//go:build linux

package seccomp

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session/fdpass"
)

// The listener handoff over a unix socket (SOCK_SEQPACKET): one message,
// 'L' with the listener's descriptor, or 'U' and why there is none.
const (
	handoffListener = 'L'
	handoffNone     = 'U'
)

// SendListener sends the listener fd over sock, or, with fd < 0, why
// the policy was installed without one.
func SendListener(sock, fd int, why string) error {
	var err error
	if fd >= 0 {
		err = unix.Sendmsg(sock, []byte{handoffListener}, unix.UnixRights(fd), nil, 0)
	} else {
		err = unix.Sendmsg(sock, append([]byte{handoffNone}, why...), nil, nil, 0)
	}
	if err != nil {
		return fmt.Errorf("seccomp listener handoff: %w", err)
	}
	return nil
}

// ReceiveListener reads what SendListener sent: the listener (close-on-exec
// here), or -1 and why there is none. EOF (the sender failed first) is
// an error.
func ReceiveListener(sock int) (fd int, why string, err error) {
	buf := make([]byte, 512)
	n, fds, err := fdpass.Recv(sock, buf, 1)
	if err != nil {
		return -1, "", fmt.Errorf("seccomp listener handoff: %w", err)
	}
	switch {
	case n == 0:
		return -1, "", errors.New("seccomp listener handoff: the stage sent nothing")
	case buf[0] == handoffListener && len(fds) == 1:
		return fds[0], "", nil
	case buf[0] == handoffNone && len(fds) == 0:
		return -1, string(buf[1:n]), nil
	}
	for _, f := range fds {
		unix.Close(f)
	}
	return -1, "", errors.New("seccomp listener handoff: a malformed message")
}
