//go:build unix && !linux && !darwin

package lineage

import (
	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// Other Unix systems: no way to observe a lineage precisely, so Start
// refuses (fail closed) rather than run something it cannot stop.
func signalVerified(procid.Identity, unix.Signal) bool { return false }
func newPlatformSource() (source, bool)                { return nil, false }
func KillByToken(string, int) (int, error)             { return 0, ErrUnsupported }
