package execution

import "errors"

// Sentinel errors.
var (
	// ErrAlreadyExited: a stop was asked of an execution that has ended.
	ErrAlreadyExited = errors.New("execution has already exited")
	// ErrBadPath: a path argument is empty, relative where it must not be,
	// missing, or of the wrong kind.
	ErrBadPath = errors.New("invalid path")
	// ErrRecordWritable: the record store lies where the runner can write.
	ErrRecordWritable = errors.New("record dir writable by the runner")
	// ErrNotWired: a collaborator (proof binder, tree digest, ...) was not
	// supplied.
	ErrNotWired = errors.New("execution dependency not wired")
)
