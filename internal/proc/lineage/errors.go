//go:build unix

package lineage

import (
	"errors"

	"github.com/loki-sh/loki/internal/exitcode"
)

// Sentinel errors. Start's errors wrap exactly one of the first three.
var (
	// ErrNotFound: the command does not exist (exit 127).
	ErrNotFound = errors.New("runner command not found")
	// ErrPermission: the command exists but may not be executed (exit 126).
	ErrPermission = errors.New("runner command not executable")
	// ErrLaunch: any other failure to start the runner (exit 125).
	ErrLaunch = errors.New("runner launch failed")
	// ErrTracking: the lineage could not be observed; a caller must treat
	// the run as uncontained.
	ErrTracking = errors.New("lineage tracking failed")
	// ErrUnsupported: this platform cannot track a lineage.
	ErrUnsupported = errors.New("lineage tracking is not supported on this platform")
)

// LaunchError classes an error from Start, in the shell's convention: not
// found is not launched (127), not executable cannot execute (126),
// anything else refused (125).
func LaunchError(err error) error {
	switch {
	case errors.Is(err, ErrNotFound):
		return exitcode.NotLaunched(err)
	case errors.Is(err, ErrPermission):
		return exitcode.CannotExecute(err)
	default:
		return exitcode.Refused(err)
	}
}

// ExitCodeFor is the exit code of an error from Start; 0 for nil.
func ExitCodeFor(err error) int {
	if err == nil {
		return 0
	}
	return exitcode.Code(LaunchError(err))
}
