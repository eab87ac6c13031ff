//go:build unix && !linux

package lease

import (
	"golang.org/x/sys/unix"
)

// readPath reads the lease with ordinary system calls (the raw variant is
// a Linux concern: it keeps the init's idle wakeups down).
func readPath(path string, _ *byte) (value [Size]byte, ok bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return value, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return value, false
	}
	var buf [Size + 1]byte
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return value, false
		}
		if m == 0 {
			break
		}
		n += m
	}
	return exact(&buf, n)
}
