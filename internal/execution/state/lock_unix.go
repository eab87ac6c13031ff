//go:build unix

package state

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lock takes the exclusive advisory lock on dir/.lock, blocking until it is
// free, and returns its release. flock locks belong to the open file, so two
// goroutines of one process exclude each other as well as two processes.
func lock(dir string) (func(), error) {
	f, err := os.OpenFile(dir+"/.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state: open lock: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("state: lock: %w", err)
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
