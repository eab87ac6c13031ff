//go:build unix

package safefile

import (
	"os"

	"golang.org/x/sys/unix"
)

// Open opens path read-only with O_NOFOLLOW|O_NONBLOCK. A final symlink
// fails with ELOOP (wrapped in *os.PathError).
func Open(path string) (*os.File, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}
