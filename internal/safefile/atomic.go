//go:build unix

package safefile

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteAtomic replaces path with data so that a reader sees either the old
// content or all of the new, never a prefix: the bytes go to a temporary
// file in the same directory (same filesystem, so rename is atomic), which
// is synced, given mode, renamed over path, and then the directory itself is
// synced so the rename survives a power loss. The parent is created 0700.
func WriteAtomic(path string, data []byte, mode os.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("safefile: create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("safefile: temp file in %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("safefile: chmod temp file: %w", err)
	}
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("safefile: write temp file: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("safefile: sync temp file: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("safefile: close temp file: %w", err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("safefile: replace %s: %w", filepath.Base(path), err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes a completed rename durable. Failure is not reported: the
// replacement already happened and is visible; only its durability across
// a crash of the machine is weaker, exactly as in the reference.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
