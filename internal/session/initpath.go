//go:build unix

package session

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// InitFixHint is the one-line fix printed with ErrInitNotFound.
const InitFixHint = "build it with `make build` (bin/loki-init) or pass --init PATH"

// FindInit resolves loki-init: the explicit path when given, else the file
// next to the running executable, else PATH. The result is absolute.
func FindInit(explicit string) (string, error) {
	if explicit != "" {
		return checkExecutable(explicit)
	}
	if self, err := os.Executable(); err == nil {
		if p, err := checkExecutable(filepath.Join(filepath.Dir(self), "loki-init")); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("loki-init"); err == nil {
		return filepath.Abs(p)
	}
	return "", fmt.Errorf("%w next to loki-supervise or on PATH: %s", ErrInitNotFound, InitFixHint)
}

func checkExecutable(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrInitNotFound, p, err)
	}
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s is not an executable file: %s", ErrInitNotFound, abs, InitFixHint)
	}
	return abs, nil
}
