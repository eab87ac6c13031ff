//go:build linux

package oci

import (
	"os"
	"path/filepath"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// TestMakeMountPoints: missing mount points are made in the rootfs (a file
// for a file's bind), mode 0755/0644 whatever the umask; one inside an
// earlier mount is left to the runtime; a symlink in the rootfs that
// points out of it is resolved inside it, never on the host.
func TestMakeMountPoints(t *testing.T) {
	rootfs, outside := t.TempDir(), t.TempDir()
	file := filepath.Join(t.TempDir(), "init")
	if err := os.WriteFile(file, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(rootfs, "escape")); err != nil {
		t.Fatal(err)
	}
	ms := []specs.Mount{
		{Destination: "/tmp", Type: "tmpfs"},
		{Destination: "/tmp/inside", Type: "bind", Source: outside},
		{Destination: "/.loki/init", Type: "bind", Source: file},
		{Destination: "/.loki/control", Type: "bind", Source: outside},
	}
	old := umask(0o077)
	err := makeMountPoints(rootfs, ms)
	umask(old)
	if err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{"tmp": os.ModeDir | 0o755, ".loki": os.ModeDir | 0o755,
		".loki/init": 0o644, ".loki/control": os.ModeDir | 0o755} {
		st, err := os.Lstat(filepath.Join(rootfs, path))
		if err != nil || st.Mode() != mode {
			t.Errorf("%s: %v, %v: want %v", path, st.Mode(), err, mode)
		}
	}
	if _, err := os.Stat(filepath.Join(rootfs, "tmp", "inside")); err == nil {
		t.Error("made a mount point inside the container's own /tmp")
	}
	// /escape resolves to the rootfs's own /<outside>, which is missing:
	// refused, and nothing made on the host.
	if err := makeMountPoints(rootfs, []specs.Mount{{Destination: "/escape/x", Type: "bind", Source: outside}}); err == nil {
		t.Error("a mount point through a dangling symlink was made")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("made %v outside the rootfs through a symlink", entries)
	}
}

func umask(m int) int { return unix.Umask(m) }
