//go:build unix

package safefile

import (
	"errors"
	"fmt"
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

// ErrNotRegular: the name is a symlink, or not a regular file (a FIFO,
// socket, device or directory), and is not read.
var ErrNotRegular = errors.New("link or not a regular file")

// OpenRegular is Open for a file that must be a regular one: a final
// symlink, anything else planted at the name, or a file whose kind
// cannot be read back is ErrNotRegular, wrapped with path.
func OpenRegular(path string) (*os.File, error) {
	f, err := Open(path)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	return f, nil
}
