// Package exitcode is the one place where outcomes become process exit
// codes (architecture.md, Contract 3). Code returns the outcome, not a
// number: a class (usage, refused, not launched, lease expired, ...) or a
// child's own status. Binaries turn it into a code once, at the end, with
// Code; nothing else calls os.Exit with a literal.
//
// As in containerd's errdefs, a class is a sentinel error: callers test it
// with errors.Is, and the cause keeps its own sentinels (errors.Is finds
// both). Classing an error never changes its message.
package exitcode

import (
	"errors"
	"fmt"
	"syscall"
)

// The classes. Each comment gives the code Code assigns it.
var (
	ErrFailed        = errors.New("failed")                   // 1: the answer is no (a check failed, no such record)
	ErrUsage         = errors.New("usage")                    // 2: bad arguments
	ErrLeaseExpired  = errors.New("lease expired")            // 124: no renewal within the lease duration, at any stage
	ErrTimeout       = errors.New("timed out")                // 124: a deadline ran out
	ErrRefused       = errors.New("refused")                  // 125: refused or failed: bad prelude, lost output, signalled peer, ...
	ErrCannotExecute = errors.New("cannot execute")           // 126: the command exists but may not be executed
	ErrNotLaunched   = errors.New("not launched")             // 127: the runner, command or backend could not be started
	ErrSignalled     = errors.New("ended by a signal")        // 128+N: a death (or stop) by signal N, the shell's convention
	ErrExited        = errors.New("exited with its own code") // the code itself: a child's, passed on
)

// signalBase + N is the code of a death by signal N.
const signalBase = 128

// Error is an outcome: its class, the status for ErrExited or the signal
// for ErrSignalled, and its cause. A nil cause means "exit silently" (the
// code itself is the report, e.g. a peer's own code).
type Error struct {
	class error
	n     int
	err   error
}

func (e *Error) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", Code(e))
	}
	return e.err.Error()
}

// Unwrap exposes both the class and the cause to errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.err == nil {
		return []error{e.class}
	}
	return []error{e.class, e.err}
}

func with(class, err error) *Error { return &Error{class: class, err: err} }

// Failed, Usage, LeaseExpired, Timeout, Refused, CannotExecute and
// NotLaunched class err (nil: exit silently with the class's code).
func Failed(err error) error        { return with(ErrFailed, err) }
func Usage(err error) error         { return with(ErrUsage, err) }
func LeaseExpired(err error) error  { return with(ErrLeaseExpired, err) }
func Timeout(err error) error       { return with(ErrTimeout, err) }
func Refused(err error) error       { return with(ErrRefused, err) }
func CannotExecute(err error) error { return with(ErrCannotExecute, err) }
func NotLaunched(err error) error   { return with(ErrNotLaunched, err) }

// Signalled is a death, or a stop from outside, by signal sig.
func Signalled(sig int, err error) error { return &Error{class: ErrSignalled, n: sig, err: err} }

// Exited passes a child's own exit code on, silently (0 included: an
// *Error is never nil, for loops that read nil as "keep going").
func Exited(code int) error { return &Error{class: ErrExited, n: code} }

// Wait is a child's end: its exit code (code >= 0) or its death by signal
// sig (sig > 0), as Exited or Signalled.
func Wait(code, sig int) error {
	if sig > 0 {
		return Signalled(sig, nil)
	}
	return Exited(code)
}

// Status splits what exec.Cmd.Wait (or Run) returned into the child's
// exit code (nil is code 0) or its signal (code -1). ok is false for an
// error that is not a child's end: the wait itself failed.
func Status(err error) (code, sig int, ok bool) {
	if err == nil {
		return 0, 0, true
	}
	var ps interface {
		Sys() any
		ExitCode() int
	}
	if !errors.As(err, &ps) {
		return -1, 0, false
	}
	if ws, isWS := ps.Sys().(syscall.WaitStatus); isWS && ws.Signaled() {
		return -1, int(ws.Signal()), true
	}
	return ps.ExitCode(), 0, true
}

// Classified reports whether err carries a class (or is nil).
func Classified(err error) bool {
	var e *Error
	return err == nil || errors.As(err, &e) || classCode(err) != 0
}

// Report is what a binary prints for err: the cause, nil when the outcome
// is silent.
func Report(err error) error {
	if e, ok := err.(*Error); ok {
		return e.err
	}
	return err
}

// Code is the one switch from outcomes to exit codes: 0 for nil, the
// outermost *Error's code, the code of a class wrapped with %w, and 125
// (refused or failed) for an error nobody classed.
func Code(err error) int {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		switch e.class {
		case ErrExited:
			if e.n < 0 || e.n > 255 {
				return classCode(ErrRefused)
			}
			return e.n
		case ErrSignalled:
			return signalBase + e.n
		}
		return classCode(e.class)
	}
	if c := classCode(err); c != 0 {
		return c
	}
	return classCode(ErrRefused)
}

// classCode is the code of err's class, 0 when it has none.
func classCode(err error) int {
	switch {
	case errors.Is(err, ErrFailed):
		return 1
	case errors.Is(err, ErrUsage):
		return 2
	case errors.Is(err, ErrLeaseExpired), errors.Is(err, ErrTimeout):
		return 124
	case errors.Is(err, ErrRefused):
		return 125
	case errors.Is(err, ErrCannotExecute):
		return 126
	case errors.Is(err, ErrNotLaunched):
		return 127
	}
	return 0
}
