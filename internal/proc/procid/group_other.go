//go:build !unix

package procid

import "syscall"

func signalGroup(pgid int, sig syscall.Signal) error { return ErrUnsupported }
