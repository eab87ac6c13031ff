package pid1

import (
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
// like a finished one).
func peerOutcome(st reap.Status) error {
	if !st.Exited {
		return refuse(StageSupervision, ErrPeerSignal)
	}
	return exitcode.Exited(st.Code)
}

// shutdownCode is the exit after a forwarded signal whose grace ran out:
// the shell convention 128+N, so callers can tell "stopped from outside"
// from the peer's own codes and from the init's 124/125.
func shutdownCode(sig int) error { return exitcode.Signalled(sig, nil) }
