//go:build unix

package session

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// checkPrivate fails closed unless dir is a real directory owned by us that
// nobody else can write: otherwise another user could swap the lease.
func checkPrivate(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("%w: %w", ErrControlDir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("%w: %s is not a directory", ErrControlDir, dir)
	}
	if int(st.Uid) != unix.Geteuid() {
		return fmt.Errorf("%w: %s is owned by uid %d, not by us", ErrControlDir, dir, st.Uid)
	}
	if st.Mode&0o022 != 0 {
		return fmt.Errorf("%w: %s is writable by group or others (chmod 700 it)", ErrControlDir, dir)
	}
	return nil
}

func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
}

// pidNamespace names this process's PID namespace ("" where there is no
// such thing): a recorded pid means nothing in another one.
func pidNamespace() string {
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return link
}
