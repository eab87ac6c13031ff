package landlock

import "errors"

// ErrUnavailable: the kernel has no Landlock, or its ABI is too old for
// what was asked.
var ErrUnavailable = errors.New("landlock is not available")
