package procid

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// signalPidFD signals exactly the process the pidfd was opened for.
func signalPidFD(fd int, sig syscall.Signal) error {
	err := unix.PidfdSendSignal(fd, sig, nil, 0)
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if errno == syscall.ESRCH {
			return syscall.ESRCH
		}
		return &SignalError{Errno: errno}
	}
	return &SignalError{Errno: syscall.EINVAL}
}
