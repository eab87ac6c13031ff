package execution

import (
	"fmt"

	"github.com/loki-sh/loki/internal/execution/state"
)

// StopResult says what RequestStop did.
type StopResult struct {
	// RequestedAt is the recorded stop_requested_at (the earlier one when
	// a stop was already pending).
	RequestedAt string
	// AlreadyRequested: an earlier request was pending; nothing changed.
	AlreadyRequested bool
	// SupervisorAlive is false when no live supervisor will act on it.
	SupervisorAlive bool
}

// RequestStop records a durable stop request under the execution lock. The
// supervisor of the execution acts on it at its next poll. It fails with
// state.ErrNotFound for an unknown execution and ErrAlreadyExited for one
// that has ended, and never creates a record.
func RequestStop(store *state.Store, id state.ID) (StopResult, error) {
	var res StopResult
	st, err := store.Read(id)
	if err != nil {
		return res, err
	}
	_, err = store.Mutate(id, func(st state.State, exists bool) error {
		if !exists {
			return fmt.Errorf("%w: %s", state.ErrNotFound, id)
		}
		if st.Str(state.FieldState) == state.StateExited {
			return fmt.Errorf("%w: %s (%s)", ErrAlreadyExited, id, st.Str(state.FieldTerminationReason))
		}
		if at := st.Str(state.FieldStopRequestedAt); at != "" {
			res.RequestedAt, res.AlreadyRequested = at, true
			return errUnchanged
		}
		res.RequestedAt = utcNow()
		st[state.FieldStopRequestedAt] = res.RequestedAt
		return nil
	})
	if err == errUnchanged {
		err = nil
	}
	if err == nil {
		if cur, rerr := store.Read(id); rerr == nil {
			st = cur
		}
		res.SupervisorAlive = SupervisorAlive(st)
	}
	return res, err
}

// errUnchanged aborts a Mutate without writing.
var errUnchanged = fmt.Errorf("unchanged")
