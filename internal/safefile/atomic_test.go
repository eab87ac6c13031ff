//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// WriteAtomic creates the parent 0700, replaces the file whole with the
// asked mode, and leaves no temporary file behind.
func TestWriteAtomicReplaces(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	p := filepath.Join(dir, "f.json")
	for _, content := range []string{"old", "new content"} {
		if err := WriteAtomic(p, []byte(content), 0o400); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != content {
			t.Fatalf("read %q, %v; want %q", b, err, content)
		}
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode() != 0o400 {
		t.Fatalf("file mode %v, %v; want 0400", fi.Mode(), err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("parent mode %v, %v; want 0700", fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("directory holds %d entries, want only the file", len(ents))
	}
}

// Replace creates no directory: into a missing one it fails with the
// missing directory's error, which callers name by its class.
func TestReplaceNeedsTheDirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "none", "proof.json")
	if err := Replace(p, []byte("{}"), 0o400); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Replace into a missing dir = %v, want not-exist", err)
	}
	if _, err := os.Stat(filepath.Dir(p)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Replace created %s", filepath.Dir(p))
	}
	p = filepath.Join(filepath.Dir(filepath.Dir(p)), "proof.json")
	if err := Replace(p, []byte("{}"), 0o400); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode() != 0o400 {
		t.Fatalf("mode %v, %v; want 0400", fi.Mode(), err)
	}
}
