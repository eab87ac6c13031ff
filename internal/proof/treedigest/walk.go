//go:build unix

package treedigest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The exclusion lists are part of the manifest, so they are data of the
// digest and appear in this exact (sorted) order.
var (
	excludedTopLevel = []string{".git", ".loki", ".next", ".nuxt", "target"}
	excludedAnyDepth = []string{".git", ".mypy_cache", ".pytest_cache", ".venv", "__pycache__", "node_modules", "venv"}
)

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// walk lists every non-directory below root, as relative '/'-separated
// paths. It descends only into real directories (never a symlink), skips
// the top-level and any-depth exclusions and the gitlink paths, and reports
// directories it cannot list in unreadable (the digest records them instead
// of silently covering less than the tree).
func walk(root string, gitlinks map[string]bool) (paths []string, unreadable map[string]bool, err error) {
	unreadable = map[string]bool{}
	var visit func(rel string) error
	visit = func(rel string) error {
		f, err := openDir(filepath.Join(root, filepath.FromSlash(rel)), rel != "")
		if err != nil {
			return dirError(rel, err, unreadable)
		}
		entries, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return dirError(rel, err, unreadable)
		}
		for _, e := range entries {
			name := e.Name()
			child := name
			if rel != "" {
				child = rel + "/" + name
			}
			if !e.IsDir() { // a symlink to a directory is not IsDir here
				paths = append(paths, child)
				continue
			}
			if (rel == "" && contains(excludedTopLevel, name)) || contains(excludedAnyDepth, name) || gitlinks[child] {
				continue
			}
			if err := visit(child); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(""); err != nil {
		return nil, nil, err
	}
	return paths, unreadable, nil
}

// openDir opens a directory the walk found, refusing anything else: a
// FIFO swapped in for it must not block the open, nor a link below the
// root redirect it (the root itself may be named through one).
func openDir(path string, nofollow bool) (*os.File, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK | unix.O_CLOEXEC
	if nofollow {
		flags |= unix.O_NOFOLLOW
	}
	for {
		fd, err := unix.Open(path, flags, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// dirError classifies a failure to list a directory: one that vanished is
// simply absent; one we may not read becomes an unreadable entry; the root
// itself failing is an error.
func dirError(rel string, err error, unreadable map[string]bool) error {
	if rel == "" {
		return err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, fs.ErrPermission):
		unreadable[rel] = true
		return nil
	}
	// Anything else (EIO, ENOTDIR after a swap) also means the content is
	// unknown: record it rather than fail the whole digest.
	unreadable[rel] = true
	return nil
}
