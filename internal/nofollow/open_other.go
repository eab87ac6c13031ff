//go:build !unix

package nofollow

import (
	"fmt"
	"os"
)

// Open refuses a symlink by lstat where O_NOFOLLOW does not exist; the
// check and the open are not atomic there.
func Open(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("open %s: is a symlink", path)
	}
	return os.Open(path)
}
