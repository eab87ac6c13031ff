//go:build unix

package lease

import (
	"golang.org/x/sys/unix"
)

// Read returns the lease value when path is a regular file of exactly Size
// bytes. It never blocks on a FIFO and never follows a symlink.
func Read(path string) (value [Size]byte, ok bool) {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return value, false
	}
	return readPath(path, p)
}

// exact keeps buf as the value only when it held exactly Size bytes; buf
// has room for one byte more, so a long file is detected as long.
func exact(buf *[Size + 1]byte, n int) (value [Size]byte, ok bool) {
	if n != Size {
		return value, false
	}
	copy(value[:], buf[:Size])
	return value, true
}

func bytePtr(path string) (*byte, error) { return unix.BytePtrFromString(path) }
