//go:build unix

package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrCwd: the peer's working directory, a host path, is not a directory
// the session could start in.
var ErrCwd = errors.New("working directory")

// CheckHostCwd refuses a cwd that is missing or not a directory, naming
// the first path on the way that does not exist: a missing dir is not
// a permission or kernel problem, and the fix is to create it.
func CheckHostCwd(cwd string) error {
	fi, err := os.Stat(cwd)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("%w %s is not a directory", ErrCwd, cwd)
	case errors.Is(err, os.ErrNotExist):
		missing := cwd
		for d := filepath.Dir(cwd); d != missing; d = filepath.Dir(d) {
			if _, err := os.Lstat(d); err == nil {
				break
			}
			missing = d
		}
		if missing == cwd {
			return fmt.Errorf("%w %s does not exist (create it or pass another --cwd)", ErrCwd, cwd)
		}
		return fmt.Errorf("%w %s: %s does not exist (create it or pass another --cwd)", ErrCwd, cwd, missing)
	default:
		return fmt.Errorf("%w %s: %v", ErrCwd, cwd, err)
	}
}
