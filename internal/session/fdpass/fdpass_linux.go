//go:build linux

// Package fdpass receives one message with descriptors over a unix
// socket: the one way the supervisor takes what a session's stage made
// inside its namespaces (the egress listener, the seccomp listener).
//
// Guarantee: every descriptor received is close-on-exec, and none is
// left open when the message cannot be parsed.
package fdpass

import (
	"golang.org/x/sys/unix"
)

// Recv reads one message into buf and the descriptors sent with it
// (at most max), retrying on EINTR. n == 0 is EOF.
func Recv(sock int, buf []byte, max int) (n int, fds []int, err error) {
	oob := make([]byte, unix.CmsgSpace(4*max))
	var oobn int
	for {
		n, oobn, _, _, err = unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil || oobn == 0 {
		return n, nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return n, nil, nil
	}
	for i := range msgs {
		got, err := unix.ParseUnixRights(&msgs[i])
		if err == nil {
			fds = append(fds, got...)
		}
	}
	return n, fds, nil
}
