package pycompat

import (
	"errors"
	"io/fs"
	"syscall"
)

// errnoClasses is CPython's table from errno to the OSError subclass that
// OSError(errno, ...) becomes (Objects/exceptions.c, PEP 3151).
// EWOULDBLOCK is EAGAIN on every platform loki builds for.
var errnoClasses = map[syscall.Errno]string{
	syscall.EAGAIN:       "BlockingIOError",
	syscall.EALREADY:     "BlockingIOError",
	syscall.EINPROGRESS:  "BlockingIOError",
	syscall.ECHILD:       "ChildProcessError",
	syscall.EPIPE:        "BrokenPipeError",
	syscall.ESHUTDOWN:    "BrokenPipeError",
	syscall.ECONNABORTED: "ConnectionAbortedError",
	syscall.ECONNREFUSED: "ConnectionRefusedError",
	syscall.ECONNRESET:   "ConnectionResetError",
	syscall.EEXIST:       "FileExistsError",
	syscall.ENOENT:       "FileNotFoundError",
	syscall.EISDIR:       "IsADirectoryError",
	syscall.ENOTDIR:      "NotADirectoryError",
	syscall.EINTR:        "InterruptedError",
	syscall.EACCES:       "PermissionError",
	syscall.EPERM:        "PermissionError",
	syscall.ESRCH:        "ProcessLookupError",
	syscall.ETIMEDOUT:    "TimeoutError",
}

// ErrnoClass names the exception class CPython raises for errno e:
// "OSError" for an errno without a subclass of its own.
func ErrnoClass(e syscall.Errno) string {
	if c, ok := errnoClasses[e]; ok {
		return c
	}
	return "OSError"
}

// ErrorClass names err by kind only, never by its text (which could carry
// paths or data), as the reference's type(exc).__name__ does: the class of
// the errno err carries; without one, the class of the fs sentinel it
// wraps (a missing file, a refused permission, an existing file); and
// otherwise fallback, the class the reference's own code would raise.
func ErrorClass(err error, fallback string) string {
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
		return ErrnoClass(errno)
	case errors.Is(err, fs.ErrNotExist):
		return "FileNotFoundError"
	case errors.Is(err, fs.ErrPermission):
		return "PermissionError"
	case errors.Is(err, fs.ErrExist):
		return "FileExistsError"
	}
	return fallback
}
