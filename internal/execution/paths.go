package execution

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Kind is what a path argument must name.
type Kind int

// Kinds of path arguments.
const (
	Dir Kind = iota
	File
)

// ResolvePath turns a path argument into an absolute path with symlinks
// resolved, refusing (ErrBadPath) empty values, control characters, paths
// that do not exist, and paths of the wrong kind. name is the flag, for the
// message.
func ResolvePath(name, raw string, kind Kind) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", fmt.Errorf("%s: %w: empty", name, ErrBadPath)
	}
	if strings.ContainsAny(raw, "\x00\n\r\t") {
		return "", fmt.Errorf("%s: %w: contains a control character", name, ErrBadPath)
	}
	abs, err := filepath.Abs(raw)
	if err != nil {
		return "", fmt.Errorf("%s: %w: %v", name, ErrBadPath, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %w: %s does not exist", name, ErrBadPath, raw)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s: %v", name, ErrBadPath, raw, errors.Unwrap(err))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s: %v", name, ErrBadPath, raw, errors.Unwrap(err))
	}
	switch {
	case kind == Dir && !fi.IsDir():
		return "", fmt.Errorf("%s: %w: %s is not a directory", name, ErrBadPath, raw)
	case kind == File && !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s: %w: %s is not a regular file", name, ErrBadPath, raw)
	}
	return real, nil
}
