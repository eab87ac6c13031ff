//go:build !linux

package sockdiag

import "errors"

// ErrUnsupported: no sock_diag on this system.
var ErrUnsupported = errors.New("sock_diag: not supported on this system")

// Paths is unsupported off Linux.
func Paths() ([]string, error) { return nil, ErrUnsupported }
