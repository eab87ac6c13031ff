//go:build unix

// Package provider answers one question before a confined build is
// offered: can the selected provider CLI authenticate and answer a live
// request from inside the exact Seatbelt boundary the build will get?
//
// Guarantees:
//   - The provider CLI runs only under sandbox-exec with the build's own
//     profile, environment (package runnerenv) and working directory, so a
//     pass means the build itself will pass.
//   - Provider output is read only to classify it; it is never returned,
//     printed, logged or stored, and at most MaxOutput bytes are kept in
//     memory while classifying.
//   - Every run is bounded (AuthTimeout, ReadinessTimeout); on timeout the
//     CLI's whole process group is killed.
//   - The result is one of a fixed set of classifications, each with an
//     action the user can take.
package provider
