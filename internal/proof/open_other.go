//go:build !unix

package proof

import (
	"fmt"
	"os"
)

// openNoFollow refuses a symlink by lstat where O_NOFOLLOW does not exist.
func openNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symlink", path)
	}
	return os.Open(path)
}
