// Package pid1test runs a real loki-init binary as PID 1 of a fresh PID
// (and mount) namespace, the way a container runtime would, and gives tests
// the host's side of the protocol: a lease renewer that can be started,
// stopped or never started, a prelude writer, the captured stdout and
// stderr, the exit code, and the namespace's identity so a test can check
// that nothing of it survives the init.
//
// It is shared: the loki-init tests use it directly, and the session tests
// of loki-supervise reuse its namespace checks. Every Session is bounded:
// Wait has a timeout, and cleanup kills the namespace (by its PID 1, which
// the test started) if a test forgot to.
package pid1test
