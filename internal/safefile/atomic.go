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
// A failed sync of the directory is not reported: the replacement already
// happened and is visible; only its durability across a crash of the
// machine is weaker, exactly as in the reference's state writes.
func WriteAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("safefile: create %s: %w", dir, err)
	}
	_, err := replace(path, data, mode)
	return err
}

// Replace is WriteAtomic into a directory that must already exist, and it
// reports a failed sync of the directory too, for callers that must say
// the write is durable (the reference's proof snapshot).
func Replace(path string, data []byte, mode os.FileMode) error {
	syncErr, err := replace(path, data, mode)
	if err != nil {
		return err
	}
	return syncErr
}

// replace writes, syncs and renames; syncErr is the directory's sync
// failure, apart from err because the new content is in place by then.
func replace(path string, data []byte, mode os.FileMode) (syncErr, err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("safefile: temp file in %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(mode); err != nil {
		return nil, fmt.Errorf("safefile: chmod temp file: %w", err)
	}
	if _, err = tmp.Write(data); err != nil {
		return nil, fmt.Errorf("safefile: write temp file: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return nil, fmt.Errorf("safefile: sync temp file: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return nil, fmt.Errorf("safefile: close temp file: %w", err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("safefile: replace %s: %w", filepath.Base(path), err)
	}
	return syncDir(dir), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("safefile: sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("safefile: sync %s: %w", dir, err)
	}
	return nil
}
