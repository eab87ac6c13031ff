//go:build unix

package procid

import (
	"errors"
	"syscall"
)

// ErrGroupRefused is the fail-closed refusal: the recorded runner group can
// no longer be proven to be the one that was spawned. Its text is what the
// execution record stores in stop_error.
var ErrGroupRefused = errors.New("Runner group identity changed or is imprecise; signal refused")

// SignalError is a signal the kernel rejected after the identity proof
// passed. Its text names the failure class only, like the reference
// ("Runner group signal failed: PermissionError").
type SignalError struct{ Errno syscall.Errno }

func (e *SignalError) Error() string { return "Runner group signal failed: " + errnoClass(e.Errno) }

func (e *SignalError) Unwrap() error { return e.Errno }

// errnoClass names an errno the way Python names the OSError subclass it
// raises, so records written by either supervisor read the same.
func errnoClass(e syscall.Errno) string {
	switch e {
	case syscall.EPERM, syscall.EACCES:
		return "PermissionError"
	case syscall.ESRCH:
		return "ProcessLookupError"
	case syscall.EINTR:
		return "InterruptedError"
	}
	return "OSError"
}

// Group is a runner recorded at spawn as the leader of its own session and
// process group (pid == pgid == sid), with its birth token and, on Linux,
// a pidfd opened at spawn time (-1 when there is none).
type Group struct {
	PID, PGID, SID int
	Token          string
	PidFD          int
}

// Verify proves, immediately before a signal, that the group is still the
// one recorded: pid == pgid == sid and > 1, a signal-safe token, a live
// non-zombie process with that token, and the same pgid and sid now. Any
// doubt is ErrGroupRefused.
func (g Group) Verify() error {
	if g.PID <= 1 || g.PID != g.PGID || g.PID != g.SID {
		return ErrGroupRefused
	}
	id, err := Restore(g.PID, g.Token)
	if err != nil || !id.Matches() {
		return ErrGroupRefused
	}
	st, err := Stat(g.PID)
	if err != nil || st.PGID != g.PGID || st.SID != g.SID {
		return ErrGroupRefused
	}
	return nil
}

// Signal sends sig to the whole group after Verify. On Linux the leader is
// first signalled through its pidfd, which cannot reach any other process
// even if the pid were reused; the rest of the group is reached by pgid,
// which the token proof above covers. A group that vanished meanwhile is
// not an error (there is nothing left to stop).
//
// The leader may see a standard signal twice (pidfd, then the group);
// pending standard signals coalesce, and SIGTERM/SIGKILL are idempotent
// for any runner that handles them sanely.
func (g Group) Signal(sig syscall.Signal) error {
	if err := g.Verify(); err != nil {
		return err
	}
	if g.PidFD >= 0 {
		if err := signalPidFD(g.PidFD, sig); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				return nil
			}
			return err
		}
	}
	return signalGroup(g.PGID, sig)
}
