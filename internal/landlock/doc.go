// Package landlock is loki's one user of the kernel's Landlock LSM: the
// ABI query, and the rulesets and scopes a process applies to itself and
// to what it execs.
//
// It knows nothing of the host boundary: the build's enforcer that turns
// the boundary into a ruleset is internal/execution/sandbox/landlock
// (imported as sandboxlandlock; it imports this package as kernlandlock).
//
// Guarantees:
//   - ABI reports what the running kernel offers (0 when Landlock is not
//     built in or is disabled at boot); nothing here guesses from the
//     kernel's version.
//   - A restriction applies to the calling thread and what it execs,
//     never to the process's other threads: callers restrict a locked
//     thread that execs next.
//   - An error means nothing was enforced; ErrUnavailable says the
//     kernel cannot express what was asked, so a caller that must not run
//     unconfined refuses instead.
package landlock
