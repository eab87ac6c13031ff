//go:build unix

package state

import "errors"

// Sentinel errors.
var (
	// ErrInvalidID: the text is not a UUID.
	ErrInvalidID = errors.New("execution id must be a valid UUID")
	// ErrNotFound: no state.json for this execution.
	ErrNotFound = errors.New("no such execution")
	// ErrCorrupt: state.json exists but is not a JSON object.
	ErrCorrupt = errors.New("execution state is not a JSON object")
	// ErrNotRegular: a file of the execution (runner.log) is a link or
	// not a regular file, and is not followed.
	ErrNotRegular = errors.New("execution file is a link or not a regular file")
)
