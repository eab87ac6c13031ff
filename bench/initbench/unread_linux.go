package main

import "golang.org/x/sys/unix"

// unread is how many bytes wait in the pipe fd belongs to (FIONREAD).
func unread(fd int) (int, error) { return unix.IoctlGetInt(fd, unix.TIOCINQ) }
