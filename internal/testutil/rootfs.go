package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	rootfsOnce sync.Once
	rootfsDir  string
	rootfsErr  error
)

// BusyboxRootfs is a minimal root filesystem for the oci and docker
// backends, built once per test process: a static busybox with its applets
// linked into /bin, and empty /proc, /dev, /sys, /tmp and /etc, world
// readable (the peer may run as another user). TestMain removes it with
// RemoveBusyboxRootfs.
func BusyboxRootfs(t testing.TB) string {
	t.Helper()
	bb := RequireCommand(t, "busybox")
	rootfsOnce.Do(func() { rootfsDir, rootfsErr = buildRootfs(bb) })
	if rootfsErr != nil {
		t.Fatalf("build rootfs: %v", rootfsErr)
	}
	return rootfsDir
}

// RemoveBusyboxRootfs removes what BusyboxRootfs built, if anything.
func RemoveBusyboxRootfs() {
	if rootfsDir != "" {
		os.RemoveAll(rootfsDir)
	}
}

func buildRootfs(bb string) (string, error) {
	dir, err := os.MkdirTemp("", "loki-test-rootfs-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	for _, d := range []string{"bin", "proc", "dev", "sys", "tmp", "etc"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return "", err
		}
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(filepath.Join(bin, "busybox"), data, 0o755); err != nil {
		return "", err
	}
	list, err := exec.Command(bb, "--list").Output()
	if err != nil {
		return "", fmt.Errorf("busybox --list: %w", err)
	}
	for _, applet := range strings.Fields(string(list)) {
		if applet == "busybox" || strings.Contains(applet, "/") {
			continue
		}
		if err := os.Symlink("busybox", filepath.Join(bin, applet)); err != nil && !os.IsExist(err) {
			return "", err
		}
	}
	return dir, nil
}
