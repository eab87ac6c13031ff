// Package testutil holds the helpers every test shares: privilege guards
// that skip with a reason on a developer machine but fail under CI=true
// (where the privileges exist), and a builder for the project's binaries so
// tests run the real programs. Helpers that run loki-init as PID 1 live in
// the sibling package pid1test.
package testutil
