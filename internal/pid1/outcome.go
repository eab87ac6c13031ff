package pid1

import (
	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/reap"
)

// Every exit is a non-nil outcome of package exitcode (code 0 included), so the event
// loop reads a nil error as "keep going".

// refuse is a failure at a stage: 125 with its refusal line.
func refuse(stage Stage, err error) error {
	return exitcode.Refused(&Refusal{Stage: stage, Err: err})
}

// expired is the silent 124 of a lease that was not renewed in time.
func expired() error { return exitcode.LeaseExpired(nil) }

// peerOutcome turns the peer's end into the init's exit: its own code when
// it exited, 125 when a signal killed it (a killed agent must never look
// like a finished one). forwarded is the signal the init forwarded from
// outside, 0 if none: a peer it ended is stopped, not refused.
func peerOutcome(st reap.Status, forwarded unix.Signal) error {
	switch {
	case st.Exited:
		return exitcode.Exited(st.Code)
	case forwarded != 0:
		return exitcode.Refused(&Stopped{Forwarded: forwarded, Killed: unix.Signal(st.Signal)})
	}
	return exitcode.Refused(&Refusal{Stage: StageSupervision, Err: ErrPeerSignal, Signal: st.Signal})
}

// signalName is a signal's fixed name ("SIGKILL"), or "unknown signal"
// for a number the platform does not name.
func signalName(sig int) string {
	if n := unix.SignalName(unix.Signal(sig)); n != "" {
		return n
	}
	return "unknown signal"
}

// Stopped is the end of a peer killed by a signal after the init forwarded
// one to it from outside (docker stop, an editor's SIGTERM through the
// supervisor). It is still 125 (Contract 3: a killed peer never passes for
// a finished one), but its line says what happened instead of claiming a
// refusal. It names signals only, never launch data.
type Stopped struct{ Forwarded, Killed unix.Signal }

func (s *Stopped) Error() string {
	return "ACP supervisor stopped the peer: " + unix.SignalName(s.Forwarded) +
		" was forwarded to it and it was ended by " + unix.SignalName(s.Killed)
}

// Unwrap keeps the class: a stopped peer is still a signalled one.
func (s *Stopped) Unwrap() error { return ErrPeerSignal }

// shutdownCode is the exit after a forwarded signal whose grace ran out:
// the shell convention 128+N, so callers can tell "stopped from outside"
// from the peer's own codes and from the init's 124/125.
func shutdownCode(sig int) error { return exitcode.Signalled(sig, nil) }
