package seatbelttest

import (
	"os"
	"path/filepath"
	"testing"
)

// ShortRoot makes a fresh directory directly under the system temp dir,
// removed when the test ends, and returns its path with symlinks resolved
// (macOS's /var is /private/var, and a boundary compares real paths). It
// is short where t.TempDir is not: a probe's unix socket path below it
// must fit in sun_path.
func ShortRoot(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return root
}
