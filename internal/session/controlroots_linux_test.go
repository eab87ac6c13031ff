//go:build linux

package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestOtherControlRoots: a running process whose last argument is a
// control dir (as a namespace session's init) names its root; one's own
// root is left out.
func TestOtherControlRoots(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	control := filepath.Join(other, "session-1", "control")
	if err := os.MkdirAll(control, 0o700); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dir, "own")
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "sleep 30", control)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	start := time.Now()
	got := OtherControlRoots(own)
	t.Logf("%d roots in %v", len(got), time.Since(start))
	if !slices.Contains(got, other) {
		t.Fatalf("OtherControlRoots = %v, want %s in it", got, other)
	}
	if slices.Contains(OtherControlRoots(other), other) {
		t.Fatalf("its own root %s is listed", other)
	}
}
