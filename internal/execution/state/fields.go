//go:build unix

package state

// The record's field names: those the reference supervisor writes
// (build_supervisor.py), because a dashboard already reads them
// (architecture.md, Contract 4). Every package that reads or writes a
// record names its fields with these.
const (
	FieldSchemaVersion        = "schema_version"
	FieldExecutionID          = "execution_id"
	FieldState                = "state" // one of StateRunning, StateExited
	FieldSupervisorPID        = "supervisor_pid"
	FieldSupervisorBirthToken = "supervisor_birth_token"
	FieldStartedAt            = "started_at"
	FieldRunnerPID            = "runner_pid"
	FieldRunnerPGID           = "runner_pgid"
	FieldRunnerSID            = "runner_sid"
	FieldRunnerBirthToken     = "runner_birth_token"
	FieldRunnerLog            = "runner_log"
	FieldRunID                = "run_id"
	FieldExitedAt             = "exited_at"
	FieldFinishedAt           = "finished_at"
	FieldReturncode           = "returncode"
	FieldExitCode             = "exit_code"
	FieldSignal               = "signal"
	FieldTerminationReason    = "termination_reason"
	FieldLaunchError          = "launch_error"
	FieldStopRequestedAt      = "stop_requested_at"
	FieldStopSignalSentAt     = "stop_signal_sent_at"
	FieldStopError            = "stop_error"
	FieldDeadlineReason       = "deadline_reason"
	FieldDeadlineAt           = "deadline_at"
	FieldFinalTreeSHA256      = "final_tree_sha256"
	FieldProof                = "proof"
	FieldDescendants          = "descendants"
	FieldConfinement          = "confinement"
)

// Of loki's own, which the reference does not write.
const (
	// ReasonSupervisorLost is the termination_reason of a run whose
	// supervisor died and whose leftovers a later command reclaimed.
	ReasonSupervisorLost = "supervisor_lost"
	// FieldFinalTreeError says why final_tree_sha256 is empty when the
	// workspace was a git work tree that could not be digested (e.g. over
	// the digest's size bound); absent otherwise.
	FieldFinalTreeError = "final_tree_error"
)

// Values of FieldState.
const (
	StateRunning = "running"
	StateExited  = "exited"
)
