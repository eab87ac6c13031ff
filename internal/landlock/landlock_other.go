//go:build !linux

package landlock

import "os"

// ABI is 0: Landlock is Linux's.
func ABI() int { return 0 }

// ScopeAbstractUnix is unavailable off Linux.
func ScopeAbstractUnix() error { return ErrUnavailable }

// Create is unavailable off Linux.
func (r *Ruleset) Create() (*os.File, error) { return nil, ErrUnavailable }

// RestrictSelf is unavailable off Linux.
func RestrictSelf(int) error { return ErrUnavailable }
