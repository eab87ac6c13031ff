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

// Exit codes of a failed launch, in the shell's convention.
const (
	codeNotFound   = exitcode.NotLaunched // 127
	codePermission = 126
	codeLaunch     = exitcode.Refused // 125
)

// ExitCodeFor maps an error from Start to the shell's exit code: 127 not
// found, 126 not executable, 125 anything else; 0 for nil.
func ExitCodeFor(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrNotFound):
		return codeNotFound
	case errors.Is(err, ErrPermission):
		return codePermission
	default:
		return codeLaunch
	}
}
