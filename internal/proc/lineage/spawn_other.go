//go:build unix && !linux && !darwin

package lineage

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// Other Unix systems: no way to observe a lineage precisely, so Start
// refuses (fail closed) rather than run something it cannot stop.
func becomeSubreaper() bool           { return false }
func selfExecutable() (string, error) { return os.Executable() }
func sysProcAttr(*int, *cgroup) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
func signalVerified(procid.Identity, unix.Signal) bool { return false }
func closeFD(fd int)                                   { _ = unix.Close(fd) }
func newPlatformSource() (source, bool)                { return nil, false }
func awaitExit(int) bool                               { return false }
func KillByToken(string, int) (int, error)             { return 0, ErrUnsupported }
