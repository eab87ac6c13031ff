//go:build unix && !linux

package procid

import "syscall"

// signalPidFD: pidfds exist only on Linux; callers pass -1 elsewhere, and a
// stray descriptor is ignored so the group signal below still happens.
func signalPidFD(fd int, sig syscall.Signal) error { return nil }
