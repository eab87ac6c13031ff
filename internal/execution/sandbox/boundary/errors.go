package boundary

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every configuration rejection.
var ErrInvalid = errors.New("invalid host boundary")

// Error is one rejected setting. Name is the environment variable or
// argument at fault; Reason says what is wrong with it, in words a user can
// act on. The message never contains anything but paths and ports.
type Error struct {
	Name   string
	Reason string
}

func (e *Error) Error() string { return e.Name + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *Error) Unwrap() error { return ErrInvalid }

func invalid(name, format string, args ...any) error {
	return &Error{Name: name, Reason: fmt.Sprintf(format, args...)}
}
