//go:build unix

package session

import "errors"

// Sentinel errors. Every one of them means the session never ran and maps to
// exit code 127 (exitcode.ErrNotLaunched).
var (
	// ErrInitNotFound: no loki-init binary at --init, next to
	// loki-supervise, or on PATH.
	ErrInitNotFound = errors.New("loki-init not found")
	// ErrControlDir: the private control directory could not be created or
	// its parent is not private to the caller.
	ErrControlDir = errors.New("control directory is not usable")
	// ErrBackend: the isolation backend could not start the init.
	ErrBackend = errors.New("isolation backend could not start")
)
