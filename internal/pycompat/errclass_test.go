package pycompat_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/loki-sh/loki/internal/pycompat"
)

func TestErrnoClass(t *testing.T) {
	rows := []struct {
		errno syscall.Errno
		class string
	}{
		{syscall.ENOENT, "FileNotFoundError"}, {syscall.EINTR, "InterruptedError"},
		{syscall.EPERM, "PermissionError"}, {syscall.EACCES, "PermissionError"},
		{syscall.ESRCH, "ProcessLookupError"}, {syscall.EEXIST, "FileExistsError"},
		{syscall.EISDIR, "IsADirectoryError"}, {syscall.ENOTDIR, "NotADirectoryError"},
		{syscall.EAGAIN, "BlockingIOError"}, {syscall.EALREADY, "BlockingIOError"},
		{syscall.EINPROGRESS, "BlockingIOError"}, {syscall.ECHILD, "ChildProcessError"},
		{syscall.EPIPE, "BrokenPipeError"}, {syscall.ESHUTDOWN, "BrokenPipeError"},
		{syscall.ECONNABORTED, "ConnectionAbortedError"}, {syscall.ECONNREFUSED, "ConnectionRefusedError"},
		{syscall.ECONNRESET, "ConnectionResetError"}, {syscall.ETIMEDOUT, "TimeoutError"},
		{syscall.EINVAL, "OSError"}, {syscall.ENOTEMPTY, "OSError"}, {syscall.EIO, "OSError"},
		{syscall.ENOSPC, "OSError"}, {syscall.EBADF, "OSError"}, {syscall.ELOOP, "OSError"},
	}
	nums := make([]int, len(rows))
	for i, r := range rows {
		nums[i] = int(r.errno)
	}
	var classes []string
	python(t, "print(json.dumps([type(OSError(n, 'x')).__name__ for n in args]))", nums, &classes)
	for i, r := range rows {
		if classes[i] != r.class {
			t.Errorf("errno %d (%v): python3 raises %s, the table says %s", r.errno, r.errno, classes[i], r.class)
		}
		if got := pycompat.ErrnoClass(r.errno); got != r.class {
			t.Errorf("ErrnoClass(%v) = %s, want %s", r.errno, got, r.class)
		}
	}
}

// ErrorClass names an errno by the table above, an fs sentinel without
// an errno by its class, and anything else by the caller's fallback.
func TestErrorClass(t *testing.T) {
	rows := []struct {
		err  error
		want string
	}{
		{&os.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}, "FileNotFoundError"},
		{fmt.Errorf("kill: %w", syscall.EINTR), "InterruptedError"},
		{&os.PathError{Op: "rmdir", Path: "/x", Err: syscall.ENOTEMPTY}, "OSError"}, // not FileExistsError
		{fmt.Errorf("gone: %w", fs.ErrNotExist), "FileNotFoundError"},
		{fmt.Errorf("refused: %w", fs.ErrPermission), "PermissionError"},
		{fmt.Errorf("taken: %w", fs.ErrExist), "FileExistsError"},
		{errors.New("no errno"), "RuntimeError"},
	}
	for _, r := range rows {
		if got := pycompat.ErrorClass(r.err, "RuntimeError"); got != r.want {
			t.Errorf("ErrorClass(%v) = %s, want %s", r.err, got, r.want)
		}
	}
}
