//go:build unix

package launch

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultPath is searched for a bare name when the environment has no
// PATH at all: execvp's default, and Python's os.defpath, which the
// reference's subprocess uses.
const DefaultPath = "/bin:/usr/bin"

// LookPath resolves a launch's argv[0] the way its own environment would,
// never the caller's: a name with a slash is taken as is (relative to
// cwd); a bare name is the first regular, executable file among the
// directories of path (an empty entry is the current directory, a
// relative one is relative to cwd). A candidate that exists but cannot be
// executed (not a regular file, no execute permission) is passed over, as
// execvp passes over EACCES.
//
// The error wraps fs.ErrPermission when some candidate exists but none
// can be executed, and fs.ErrNotExist when there is none.
func LookPath(name, path, cwd string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return p, nil
	}
	denied := false
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		err := executable(p)
		if err == nil {
			return p, nil
		}
		denied = denied || err == fs.ErrPermission
	}
	if denied {
		return "", fmt.Errorf("%s: %w", name, fs.ErrPermission)
	}
	return "", fmt.Errorf("%s: %w", name, fs.ErrNotExist)
}

// executable is nil for a regular file this process may execute,
// fs.ErrPermission for one that exists otherwise (or cannot be looked
// at), fs.ErrNotExist for none.
func executable(p string) error {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		if err == unix.EACCES {
			return fs.ErrPermission
		}
		return fs.ErrNotExist
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || unix.Access(p, unix.X_OK) != nil {
		return fs.ErrPermission
	}
	return nil
}
