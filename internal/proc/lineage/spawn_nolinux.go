//go:build unix && !linux

package lineage

import (
	"os"
	"syscall"
)

// Outside Linux there is no child subreaper (orphans go to launchd or
// init: on macOS the tracker scans every process each refresh and relies
// on the session and parent links), no /proc/self/exe, no pidfd to hand
// back from the fork, and no waitid WNOWAIT through x/sys, so the reap is
// not deferred.
func becomeSubreaper() bool           { return false }
func selfExecutable() (string, error) { return os.Executable() }
func sysProcAttr(*int, *cgroup) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
func awaitExit(int) bool { return false }

const keeperSupported = false
