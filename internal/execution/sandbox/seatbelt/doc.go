//go:build unix

// Package seatbelt confines a local build on macOS with the kernel's
// Seatbelt sandbox (sandbox-exec), inside the boundary of package boundary.
//
// Guarantees:
//   - Profile is a pure function of the validated boundary and of which
//     paths exist on this machine; it produces the reference supervisor's
//     profile byte for byte (same line order, JSON string quoting, subpath
//     for directories and literal for files), so its SHA-256 is comparable.
//   - Wrap changes nothing unless LOKI_HOST_SEATBELT is on. When it is on it
//     fails closed: off macOS, without /usr/bin/sandbox-exec, or without a
//     well-formed kernel-probe digest it returns an error rather than an
//     unconfined command.
//   - Probe proves a profile in the running kernel before confinement is
//     advertised: inside the sandbox a payload must be able to write its
//     workspace, read /etc/hosts and kill its own process group, and must be
//     refused a sibling directory, a unix-socket connect and a reserved-port
//     bind. Any other outcome is a failed probe.
//
// Nothing here prints or stores the build's environment.
package seatbelt
