package execution

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
	sandboxlandlock "github.com/loki-sh/loki/internal/execution/sandbox/landlock"
	"github.com/loki-sh/loki/internal/execution/sandbox/seatbelt"
	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/proof/hosttool"
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

// writableRoots are the directories the runner may write that the
// supervisor knows of: the workspace, the loki dir and, when a sandbox is
// armed, the runtime write paths (an unconfined runner may write more).
func writableRoots(workspace, lokiDir string) []string {
	roots := []string{workspace, lokiDir}
	if sandboxlandlock.Armed() || seatbelt.Armed() {
		// An invalid boundary is refused later by the confiner itself,
		// with its own message.
		if b, err := boundary.WritePaths(boundary.Environ); err == nil {
			roots = append(roots, b...)
		}
	}
	return roots
}

// checkRecordOutside refuses a record store the runner could write: one
// beneath a writable root (LOKI_DATA_DIR inside the workspace, or empty,
// which is the current directory). A runner that can edit its own
// state.json can rewrite how it ended.
func checkRecordOutside(root, workspace, lokiDir string) error {
	for _, w := range writableRoots(workspace, lokiDir) {
		if w != "" && boundary.Within(root, w) {
			return fmt.Errorf("%w: %s: the records (%s) would lie inside %s, which the runner can write: set %s to a directory outside it",
				ErrRecordWritable, state.EnvDataDir, root, w, state.EnvDataDir)
		}
	}
	return nil
}

// resolveTools pins the host programs the supervisor runs after the
// runner (git for the digest, gpg for signatures) before the runner
// exists, from system directories none of the runner's roots covers. A
// missing tool is not an error here: the digest then fails, and a
// signature is "n/a".
func resolveTools(workspace, lokiDir string) {
	roots := writableRoots(workspace, lokiDir)
	hosttool.Resolve("git", roots...)
	hosttool.Resolve("gpg", roots...)
}
