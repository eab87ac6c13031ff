package execution

import (
	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/proc/procid"
)

// SupervisorAlive reports whether the supervisor recorded in st is still
// the same live process: its pid exists, is not a zombie, and has the
// recorded birth token. A record without a supervisor is not alive.
func SupervisorAlive(st state.State) bool {
	pid, ok := st.Int(state.FieldSupervisorPID)
	token := st.Str(state.FieldSupervisorBirthToken)
	if !ok || pid <= 0 || token == "" {
		return false
	}
	if id, err := procid.Restore(pid, token); err == nil {
		return id.Matches()
	}
	// An imprecise (ps) token can still show that the process changed;
	// it is only trusted to say "alive", never to authorise a signal.
	s, err := procid.Stat(pid)
	if err == nil && (s.State == 'Z' || s.State == 'X') {
		return false
	}
	now, err := procid.BirthToken(pid)
	return err == nil && now == token
}

// runnerAlive reports whether the recorded runner is still the same live
// process (pid + birth token); unknown counts as alive.
func runnerAlive(st state.State) bool {
	pid, ok := st.Int(state.FieldRunnerPID)
	token := st.Str(state.FieldRunnerBirthToken)
	if !ok || pid <= 0 || token == "" {
		return true
	}
	id, err := procid.Restore(pid, token)
	if err != nil {
		return true
	}
	return id.Matches()
}

// StateQueued is the state a dashboard records before it starts the
// supervisor (docs/dashboard.md); loki itself never writes it.
const StateQueued = "queued"

// supervisorRecorded reports whether any supervisor ever wrote its
// identity into st.
func supervisorRecorded(st state.State) bool {
	_, pid := st[state.FieldSupervisorPID]
	_, tok := st[state.FieldSupervisorBirthToken]
	return pid || tok
}

// View is a record as a reader shows it: the stored fields plus derived
// ones that are never written back.
type View struct {
	State state.State
	// Display is the state for humans, e.g. "running (supervisor lost)".
	Display string
	// SupervisorAlive is derived at read time; meaningful until exited.
	SupervisorAlive bool
}

// Describe derives the reader's view of a record.
func Describe(st state.State) View {
	v := View{State: st, SupervisorAlive: SupervisorAlive(st)}
	s := st.Str(state.FieldState)
	switch {
	case s == state.StateExited:
		v.Display = "exited"
		if r := st.Str(state.FieldTerminationReason); r != "" {
			v.Display += " (" + r + ")"
		}
	case s == StateQueued && !supervisorRecorded(st):
		// The dashboard writes "queued" before it starts a supervisor:
		// there is none yet to have lost.
		v.Display = s
	case !v.SupervisorAlive && s == state.StateRunning && !runnerAlive(st):
		// Terminal: the supervisor is proven dead and its runner died
		// with it (parent death signal). `stop` reclaims any leftovers
		// and records the end.
		v.Display = "lost (supervisor lost, runner gone; stop kills what is left)"
	case !v.SupervisorAlive:
		if s == "" {
			s = "starting"
		}
		v.Display = s + " (supervisor lost)"
	case s == "":
		v.Display = "starting"
	default:
		v.Display = s
		if st.Str(state.FieldStopRequestedAt) != "" {
			v.Display += " (stopping)"
		}
	}
	return v
}

// JSON returns the record with the derived fields added, for --json.
func (v View) JSON() map[string]any {
	out := make(map[string]any, len(v.State)+2)
	for k, val := range v.State {
		out[k] = val
	}
	if v.State.Str(state.FieldState) != state.StateExited {
		out["supervisor_alive"] = v.SupervisorAlive
	}
	out["display_state"] = v.Display
	return out
}
