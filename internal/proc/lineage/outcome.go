//go:build unix

package lineage

import "time"

// Reconciliation constants (supervision.md).
const (
	pollInterval     = 20 * time.Millisecond
	quiescence       = 200 * time.Millisecond
	schedulingMargin = 300 * time.Millisecond
	minBudget        = 500 * time.Millisecond
	killPhase        = 500 * time.Millisecond // the SIGTERM phase ends this long before the budget
)

// Outcome is what Reconcile found and did; it is stored as `descendants` in
// state.json. The slices are never nil, so they marshal as [] not null.
type Outcome struct {
	Checked       bool   `json:"checked"`
	Detected      bool   `json:"detected"`
	Quiescent     bool   `json:"quiescent"`
	TermSent      []int  `json:"term_sent"`
	KillSent      []int  `json:"kill_sent"`
	RemainingPIDs []int  `json:"remaining_pids"`
	Error         string `json:"error"`
}

// EmptyOutcome is the outcome of a check that did not run.
func EmptyOutcome() Outcome {
	return Outcome{TermSent: []int{}, KillSent: []int{}, RemainingPIDs: []int{}}
}

// budget is the total time Reconcile may spend signalling for a grace g.
func budget(grace time.Duration) time.Duration {
	return max(grace+quiescence, minBudget)
}
