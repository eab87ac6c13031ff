// Package pid1 holds the end-to-end tests of the loki-init binary: each test
// runs the real static binary as PID 1 of a fresh PID namespace (through
// internal/pid1/pid1test), with a real host-side lease and prelude, and checks
// the contract from outside: exit codes, stderr, streams and what is left
// of the namespace afterwards.
package pid1
