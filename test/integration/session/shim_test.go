//go:build linux

package session

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func shimAttrForTest() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS}
}
