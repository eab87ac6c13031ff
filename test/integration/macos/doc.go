// Package macos tests the built loki-supervise's Seatbelt surface on any
// system: `build --print-profile` must print byte-for-byte the reference
// profile of internal/execution/sandbox/seatbelt/testdata for each golden
// case, name the wrong boundary variable when there is one, and never run
// the build or create its record. The macOS-only paths (sandbox-exec, the kernel probe)
// are covered where they can run; here the profile generation is pure.
package macos
