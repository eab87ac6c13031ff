//go:build linux

package sockdiag

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPathsFindsOwnSocket: a socket this test binds is listed while it
// exists, and no longer once its path names another file.
func TestPathsFindsOwnSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dg, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(dir, "d.sock"), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer dg.Close()
	got, err := Paths()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{path, filepath.Join(dir, "d.sock")} {
		if !slices.Contains(got, want) {
			t.Fatalf("Paths() = %v, want %s in it", got, want)
		}
	}
	// The path re-used by a plain file: not that socket any more.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	os.Remove(path)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = Paths()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(got, path) {
		t.Fatalf("Paths() lists %s, now a regular file", path)
	}
}
