//go:build unix

package harden

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeOnExecListed marks every open descriptor from fd up close-on-exec,
// as listed by the system's fd directory.
func closeOnExecListed(fd int) error {
	dir := "/proc/self/fd"
	if _, err := os.Stat(dir); err != nil {
		dir = "/dev/fd"
	}
	names, err := readNames(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if v, err := strconv.Atoi(n); err == nil && v >= fd {
			unix.CloseOnExec(v)
		}
	}
	return nil
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
