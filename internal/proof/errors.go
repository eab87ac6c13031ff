package proof

import "errors"

var (
	// ErrUnreadable: the receipt file could not be read (missing, not a
	// regular file, a symlink, too large, permission).
	ErrUnreadable = errors.New("receipt unreadable")
	// ErrMalformed: the receipt is not JSON that Python's json.loads
	// accepts, or its root is not an object.
	ErrMalformed = errors.New("receipt malformed")
)
