//go:build unix

package treedigest

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openNoFollow opens path for reading without following a final symlink
// and without blocking on a FIFO or device.
func openNoFollow(path string) (*os.File, error) {
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

func isNotDir(err error) bool { return errors.Is(err, unix.ENOTDIR) }
