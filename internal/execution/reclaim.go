package execution

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/proc/procid"
)

// ReclaimResult says what Reclaim did.
type ReclaimResult struct {
	Killed   int  // processes of the run's lineage it sent SIGKILL
	Recorded bool // the record now says exited (supervisor_lost)
}

// Reclaim ends a run whose supervisor is proven dead (pid + birth token):
// under the execution lock it kills what is left of the runner's lineage
// (every process carrying the lineage token recorded at spawn, which
// double-forked and setsid descendants inherit) and records the run as
// exited with termination_reason supervisor_lost, so it no longer shows as
// running forever. It does nothing to a run whose supervisor lives, or
// that has exited. The runner itself dies with its supervisor (parent
// death signal); what cannot be found is a descendant that cleared its
// environment.
func Reclaim(store *state.Store, id state.ID) (ReclaimResult, error) {
	var res ReclaimResult
	_, err := store.Mutate(id, func(st state.State, exists bool) error {
		if !exists {
			return fmt.Errorf("%w: %s", state.ErrNotFound, id)
		}
		if st.Str(state.FieldState) == state.StateExited || SupervisorAlive(st) {
			return errUnchanged
		}
		if tok := lineageToken(store, id); tok != "" {
			n, err := lineage.KillByToken(tok, 50)
			res.Killed += n
			if err != nil {
				return err
			}
		}
		// A runner recorded before lineage tokens: its verified group.
		if pid, ok := st.Int(state.FieldRunnerPID); ok {
			g := procid.Group{PID: pid, PGID: pid, SID: pid, Token: st.Str(state.FieldRunnerBirthToken)}
			if g.Verify() == nil && g.Signal(syscall.SIGKILL) == nil {
				res.Killed++
			}
		}
		now := utcNow()
		st[state.FieldState] = state.StateExited
		st[state.FieldExitedAt] = now
		st[state.FieldFinishedAt] = now
		st[state.FieldReturncode] = nil
		st[state.FieldExitCode] = nil
		st[state.FieldSignal] = nil
		st[state.FieldTerminationReason] = state.ReasonSupervisorLost
		res.Recorded = true
		return nil
	})
	if err == errUnchanged {
		err = nil
	}
	return res, err
}

// lineageToken reads the token the supervisor left beside the record, ""
// when there is none.
func lineageToken(store *state.Store, id state.ID) string {
	f, err := state.OpenRegular(store.Path(id, state.LineageFile))
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, 64)
	n, _ := f.Read(b)
	return strings.TrimSpace(string(b[:n]))
}
