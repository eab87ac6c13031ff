//go:build unix

package hosttool

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Dirs are searched in this order. /usr/local/bin and /opt/homebrew/bin
// hold a macOS gpg; each is taken only if root alone can write it.
var Dirs = []string{"/usr/bin", "/bin", "/usr/local/bin", "/opt/homebrew/bin"}

// SafePath is the PATH the tools run with: their helpers come from the
// same kind of directory.
const SafePath = "/usr/bin:/bin"

// ErrNotFound: no trustworthy copy of the tool exists in Dirs.
var ErrNotFound = errors.New("not found in a root-owned system directory")

var (
	mu       sync.Mutex
	resolved = map[string]result{}
)

type result struct {
	path string
	err  error
}

// Resolve returns the path of tool, looked up once per process; writable
// names directories the runner may write (none of them is trusted).
func Resolve(tool string, writable ...string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if r, ok := resolved[tool]; ok {
		return r.path, r.err
	}
	p, err := find(tool, Dirs, writable)
	resolved[tool] = result{p, err}
	return p, err
}

func find(tool string, dirs, writable []string) (string, error) {
	for _, d := range dirs {
		p := filepath.Join(d, tool)
		if beneath(p, writable) || !rootOnly(d, false) {
			continue
		}
		// A link (e.g. /usr/bin/sh -> dash) is taken by its target,
		// which must pass the same checks; the target is what runs.
		real, err := filepath.EvalSymlinks(p)
		if err != nil || beneath(real, writable) || !rootOnly(real, true) {
			continue
		}
		return real, nil
	}
	return "", fmt.Errorf("%s: %w (%s)", tool, ErrNotFound, strings.Join(dirs, ", "))
}

func beneath(p string, dirs []string) bool {
	for _, d := range dirs {
		if d != "" && (p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/")) {
			return true
		}
	}
	return false
}

// rootOnly checks p and every directory above it: no symlink (lstat),
// owned by root, no group or other write bit; p itself an executable
// regular file when file is true.
func rootOnly(p string, file bool) bool {
	var st syscall.Stat_t
	if syscall.Lstat(p, &st) != nil || st.Uid != 0 || st.Mode&0o022 != 0 {
		return false
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		if !file || st.Mode&0o111 == 0 {
			return false
		}
	case syscall.S_IFDIR:
		if file {
			return false
		}
	default:
		return false
	}
	if p == "/" {
		return true
	}
	return rootOnly(filepath.Dir(p), false)
}

// Env returns env with PATH replaced by SafePath.
func Env(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return append(out, "PATH="+SafePath)
}
