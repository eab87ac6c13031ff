package lease

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// readPath reads the lease with raw system calls. The init re-reads the
// lease on every renewal; an ordinary system call of an idle Go process
// wakes the runtime's sysmon thread from its deep sleep, a raw one does
// not. Every call here returns promptly on a local or bind-mounted file
// (O_NONBLOCK keeps a FIFO from blocking the open) and nothing allocates.
func readPath(_ string, p *byte) (value [Size]byte, ok bool) {
	const flags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOFOLLOW | unix.O_CLOEXEC
	dirfd := unix.AT_FDCWD
	r, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), flags, 0, 0, 0)
	if e != 0 {
		return value, false
	}
	fd := r
	defer unix.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
	var st unix.Stat_t
	if _, _, e := unix.RawSyscall(unix.SYS_FSTAT, fd, uintptr(unsafe.Pointer(&st)), 0); e != 0 || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return value, false
	}
	var buf [Size + 1]byte
	n := 0
	for n < len(buf) {
		m, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[n])), uintptr(len(buf)-n))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return value, false
		}
		if m == 0 {
			break
		}
		n += int(m)
	}
	return exact(&buf, n)
}
