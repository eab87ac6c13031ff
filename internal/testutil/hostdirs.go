package testutil

import (
	"fmt"
	"os"
	"testing"
)

// GuardHostDirs records the modes of the host's shared temp dirs and
// returns a check that names any whose mode changed since. A test may
// chmod only what it made; a chmod one level too high once took the
// sticky, world-writable bits off the host's /tmp. Call it first in a
// TestMain and fail the run when the check reports.
func GuardHostDirs() func() error {
	dirs := []string{os.TempDir(), "/var/tmp"}
	modes := map[string]os.FileMode{}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil {
			modes[d] = fi.Mode()
		}
	}
	return func() error {
		for d, before := range modes {
			fi, err := os.Stat(d)
			if err != nil {
				return fmt.Errorf("host dir %s: %v", d, err)
			}
			if fi.Mode() != before {
				return fmt.Errorf("a test changed the mode of the host's %s from %v to %v", d, before, fi.Mode())
			}
		}
		return nil
	}
}

// Main is the TestMain of a suite that runs sessions: it runs the tests,
// removes the busybox rootfs they built (BusyboxRootfs), and fails the run
// when a test changed a host dir's mode (GuardHostDirs).
func Main(m *testing.M) {
	hostDirs := GuardHostDirs()
	code := m.Run()
	RemoveBusyboxRootfs()
	if err := hostDirs(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
