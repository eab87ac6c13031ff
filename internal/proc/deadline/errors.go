package deadline

import "errors"

// Sentinel errors.
var (
	// ErrUsage: the deadlines or the command line are invalid.
	ErrUsage = errors.New("invalid deadline arguments")
	// ErrControl: a control file is missing, unsafe or malformed; nothing
	// was signalled.
	ErrControl = errors.New("control file refused")
	// ErrStale: the control file is well formed but no longer names a live
	// process with that identity; nothing was signalled.
	ErrStale = errors.New("control file names no live process")
	// ErrLeftovers: the command exited but left descendants (now stopped).
	ErrLeftovers = errors.New("command left descendant processes")
)
