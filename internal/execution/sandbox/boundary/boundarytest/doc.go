// Package boundarytest lays out one valid host boundary for tests: the
// directories and files the LOKI_HOST_* variables name, under one root,
// and the variables themselves. Every test of the policy, of its
// enforcers and of the built binaries starts from this layout and breaks
// or extends one thing, so they all judge one definition of "valid".
//
// It names the variables by their strings rather than importing package
// boundary, so that package's own tests can use it.
//
// Guarantees: New's layout passes every rule of the boundary (package
// boundary's tests load it); all it makes lies under one root, removed
// with the test when that root is the test's temp dir.
package boundarytest
