// Package exitcode is the one place where outcomes become process exit
// codes (architecture.md, Contract 3). Binaries return an *Error from their
// work and call Code once at the end; nothing else calls os.Exit with a
// literal.
package exitcode

import (
	"errors"
	"fmt"
)

// The codes both binaries share.
const (
	OK           = 0
	LeaseExpired = 124 // no renewal within the lease duration, at any stage
	Refused      = 125 // refused or failed: bad prelude, lost output, signalled peer, ...
	NotLaunched  = 127 // the runner or backend could not be started
	// SignalBase + N is a death by signal N where a shell convention is
	// wanted (deadline runner, supervisor CLI).
	SignalBase = 128
)

// Error carries an exit code with its cause. A nil cause means "exit with
// Code silently" (the code itself is the report, e.g. a peer's own code).
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// New wraps err with an exit code.
func New(code int, err error) *Error { return &Error{Code: code, Err: err} }

// Silent is an exit code with nothing to print.
func Silent(code int) *Error { return &Error{Code: code} }

// Of returns the exit code for err: 0 for nil, the carried code for an
// *Error, and fallback for anything else.
func Of(err error, fallback int) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return fallback
}

// FromWait maps a child's exit (code >= 0) or signal death (sig > 0) to a
// shell-style code: the code itself, or 128+N.
func FromWait(code int, sig int) int {
	if sig > 0 {
		return SignalBase + sig
	}
	if code < 0 || code > 255 {
		return Refused
	}
	return code
}
