//go:build unix

package procid

import (
	"errors"
	"syscall"

	"github.com/loki-sh/loki/internal/pycompat"
)

// ErrGroupRefused is the fail-closed refusal: the recorded runner group can
// no longer be proven to be the one that was spawned. Its text is what the
// execution record stores in stop_error.
var ErrGroupRefused = errors.New("Runner group identity changed or is imprecise; signal refused")

// SignalError is a signal the kernel rejected after the identity proof
// passed. Its text names the failure class only, like the reference
// ("Runner group signal failed: PermissionError").
type SignalError struct{ Errno syscall.Errno }

func (e *SignalError) Error() string {
	return "Runner group signal failed: " + pycompat.ErrnoClass(e.Errno)
}

func (e *SignalError) Unwrap() error { return e.Errno }

// Group is a runner recorded at spawn as the leader of its own session and
// process group (pid == pgid == sid), with its birth token.
//
// Hold, when set, keeps the leader from being reaped until release is
// called, and says whether it was still unreaped. A process that has not
// been reaped keeps its pid, and a pid that is some group's pgid is never
// given to a new process, so while the hold lasts one kill(-pgid) reaches
// exactly the recorded group, the leader included. Without Hold (a parent
// that cannot defer its reap) a reused pgid between Verify and the kill is
// guarded by the token proof alone.
type Group struct {
	PID, PGID, SID int
	Token          string
	Hold           func() (release func(), alive bool)
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

// Signal sends sig once to every member of the group, after Verify and,
// with Hold, while the leader cannot be reaped (see Group). One kill of
// the group, never a second signal to the leader: a runner that takes a
// second SIGTERM as "force quit" must see exactly one per stop. A group
// that vanished meanwhile is not an error (there is nothing left to stop).
func (g Group) Signal(sig syscall.Signal) error {
	if g.Hold != nil {
		release, alive := g.Hold()
		defer release()
		if !alive {
			return ErrGroupRefused
		}
	}
	if err := g.Verify(); err != nil {
		return err
	}
	return signalGroup(g.PGID, sig)
}
