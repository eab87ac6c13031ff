//go:build unix

package lineage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/execution/sandbox/harden"
	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/landlock"
)

// MaybeRunGate is the entry point of Start's two roles (the exec gate and
// the keeper) for a test binary or another main: the first call of
// TestMain in tests that use Start (loki-supervise lists both in its table
// of internal entry points instead). In an ordinary process it returns at
// once; in either role it never returns.
func MaybeRunGate() {
	if IsGate() {
		os.Exit(exitcode.Code(RunGate()))
	}
	if IsKeeper() {
		os.Exit(exitcode.Code(RunKeeper()))
	}
}

// IsGate reports whether this process was started by Start as the exec
// gate. It must be asked before anything else (flags, signal handlers,
// goroutines) exists.
func IsGate() bool {
	_, ok := gateNonce()
	return ok
}

// RunGate waits to be released, then replaces this process with the runner;
// it returns only on failure, with the launch error's class.
func RunGate() error {
	nonce, ok := gateNonce()
	if !ok {
		return LaunchError(ErrLaunch)
	}
	return runGate(nonce)
}

func gateNonce() (string, bool) {
	v, ok := os.LookupEnv(gateEnv)
	if !ok || !strings.HasPrefix(v, gateVersion) || !validNonce(v[len(gateVersion):]) {
		return "", false
	}
	if !isFIFO(releaseFD) || !isFIFO(statusFD) || len(os.Args) < 3 {
		return "", false // the variable leaked into an unrelated process: not our gate
	}
	return v[len(gateVersion):], true
}

func isFIFO(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO
}

// runGate returns only on failure, with the outcome to exit with.
func runGate(nonce string) error {
	plain, restricted := releaseMessage(nonce, false), releaseMessage(nonce, true)
	got := make([]byte, len(plain))
	release := os.NewFile(releaseFD, "release")
	if _, err := io.ReadFull(release, got); err != nil || !bytes.Equal(got, plain) && !bytes.Equal(got, restricted) {
		return LaunchError(ErrLaunch) // parent gave up (or is not our parent): never exec
	}
	release.Close()
	unix.CloseOnExec(statusFD)
	if bytes.Equal(got, restricted) {
		// Landlock binds the thread that enforces it: stay on it up to
		// the exec (a no-op where the caller locked it already).
		runtime.LockOSThread()
		err := landlock.RestrictSelf(rulesetFD)
		unix.Close(rulesetFD)
		// What Landlock does not cover: no capabilities (chown, raw
		// sockets, modules, ...) and a seccomp filter (clone3 into
		// another cgroup, MPTCP, IP_LOCAL_PORT_RANGE, io_uring).
		if err == nil {
			err = harden.DropCapabilities()
		}
		if err == nil {
			err = harden.InstallFilter()
		}
		if err != nil {
			var errno unix.Errno
			if !errors.As(err, &errno) {
				errno = unix.ENOSYS
			}
			writeStatus(uint32(errno) | restrictFailed)
			return LaunchError(ErrLaunch)
		}
	}
	// A descriptor the supervisor's caller left open (not close-on-exec)
	// must not reach the runner, as the reference's close_fds=True.
	if err := harden.CloseOnExecFrom(statusFD + 1); err != nil {
		writeStatus(uint32(unix.EBADF))
		return LaunchError(ErrLaunch)
	}
	path, argv := os.Args[1], os.Args[2:]
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, gateEnv+"=") {
			env = append(env, kv)
		}
	}
	err := unix.Exec(path, argv, env)
	var errno unix.Errno
	if !errors.As(err, &errno) {
		errno = unix.EINVAL
	}
	writeStatus(uint32(errno))
	return LaunchError(classifyExec(errno))
}

func writeStatus(v uint32) {
	var msg [4]byte
	binary.BigEndian.PutUint32(msg[:], v)
	_, _ = unix.Write(statusFD, msg[:])
}

// classifyExec maps an errno of a failed exec to a sentinel.
func classifyExec(errno unix.Errno) error {
	switch errno {
	case unix.ENOENT, unix.ENOTDIR:
		return ErrNotFound
	case unix.EACCES, unix.EPERM, unix.ENOEXEC, unix.EISDIR:
		return ErrPermission
	}
	return ErrLaunch
}
