// Package faults holds end-to-end tests of loki under faults and hostile
// input: a full or read-only data dir, an unwritable runner.log, a peer
// that tampers with its lease or floods a stalled reader, a recorded pid
// taken over by another process, and preludes or environments built to
// break the launch. Each test runs the built binaries and checks what a
// user would see: the exit code, one clear line on stderr (never a Go
// stack trace or a secret), and a record that is never torn.
//
// The tests mount filesystems, so TestMain re-runs the test binary in a
// private mount namespace (as root): nothing they mount is visible on the
// host, and everything vanishes with the process even if a test dies.
package faults
