//go:build unix

package procid

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

func signalGroup(pgid int, sig syscall.Signal) error {
	err := unix.Kill(-pgid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return &SignalError{Errno: errno}
	}
	return &SignalError{Errno: syscall.EINVAL}
}
