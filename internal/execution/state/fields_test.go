package state

import "testing"

// The names are a wire format a dashboard reads: renaming a constant's
// value must fail here, not in someone's dashboard.
func TestFieldNamesAreTheReferences(t *testing.T) {
	want := map[string]string{
		FieldSchemaVersion: "schema_version", FieldExecutionID: "execution_id", FieldState: "state",
		FieldSupervisorPID: "supervisor_pid", FieldSupervisorBirthToken: "supervisor_birth_token",
		FieldStartedAt: "started_at", FieldRunnerPID: "runner_pid", FieldRunnerPGID: "runner_pgid",
		FieldRunnerSID: "runner_sid", FieldRunnerBirthToken: "runner_birth_token", FieldRunnerLog: "runner_log",
		FieldRunID: "run_id", FieldExitedAt: "exited_at", FieldFinishedAt: "finished_at",
		FieldReturncode: "returncode", FieldExitCode: "exit_code", FieldSignal: "signal",
		FieldTerminationReason: "termination_reason", FieldLaunchError: "launch_error",
		FieldStopRequestedAt: "stop_requested_at", FieldStopSignalSentAt: "stop_signal_sent_at",
		FieldStopError: "stop_error", FieldDeadlineReason: "deadline_reason", FieldDeadlineAt: "deadline_at",
		FieldFinalTreeSHA256: "final_tree_sha256", FieldProof: "proof", FieldDescendants: "descendants",
		FieldConfinement: "confinement", StateRunning: "running", StateExited: "exited",
	}
	if len(want) != 30 {
		t.Fatalf("%d distinct names, want 30: two constants share a value", len(want))
	}
	for got, w := range want {
		if got != w {
			t.Errorf("constant is %q, the reference writes %q", got, w)
		}
	}
}
