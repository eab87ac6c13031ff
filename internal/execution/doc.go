// Package execution runs one supervised execution (the `build` and `run`
// subcommands) and answers questions about recorded ones (`stop`, `status`,
// `list`, `logs`).
//
// Guarantees:
//   - The record moves through the reference supervisor's transitions in
//     its order: supervisor identity first, then either a launch_failed
//     exit (code 127, launch_error) or running (runner pid/pgid/sid/birth
//     token, started_at), then exactly one exited record carrying
//     returncode, exit_code, signal, termination_reason, descendants and
//     proof.
//   - A signal reaches the runner's group only after procid.Group.Verify
//     proves it is still the group that was spawned; otherwise the refusal
//     is recorded in stop_error and nothing further is sent.
//   - A stop (durable stop_requested_at, SIGTERM/SIGINT to the supervisor,
//     a lineage tracking failure, or an expired hard/idle deadline) sends
//     SIGTERM once, then SIGKILL once after the stop grace.
//   - The runner's environment is runnerenv's allowlist, never the
//     supervisor's environment.
//   - A run id present in <loki-dir>/state/trust-run-id before the runner
//     started never binds a proof to this execution (brownfield baseline).
//   - Readers (Describe) derive liveness of the supervisor from its pid and
//     birth token and never write it back.
package execution
