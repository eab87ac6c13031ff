// Package landlock confines a local build or run on Linux with
// Landlock, inside the same host boundary (package boundary) that package
// seatbelt enforces on macOS: one boundary, two enforcers.
//
// It is the build's Linux enforcer; the kernel calls it makes are those of
// internal/landlock, which it imports as kernlandlock. Importers name this
// package sandboxlandlock, so a reader tells the policy's enforcer from the
// kernel package shared with the namespace stage and doctor.
//
// Guarantees:
//   - Rules is a pure function of the validated boundary, the runner's log,
//     the ABI and which paths exist on this machine: read and execute
//     beneath the read paths, read and write beneath the write paths, no
//     other filesystem access; TCP bind and connect on every port but the
//     reserved ones; the runner's abstract unix sockets and signals kept to
//     its own domain.
//   - Confine changes nothing unless LOKI_HOST_LANDLOCK is on. When it is
//     on it fails closed: off Linux, on a kernel without Landlock or with
//     an ABI that cannot express the ruleset (below 6), or when a rule
//     cannot be made, it returns an error and no ruleset, never an
//     unconfined runner.
//   - The ruleset is enforced by the runner's exec gate on itself, just
//     before it execs the runner (package lineage), never on the
//     supervisor.
//
// Nothing here prints or stores the runner's environment.
package landlock
