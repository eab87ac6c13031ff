// Package backends is the one table of the ways the integration suites run
// a session: a row per backend (namespace, namespace-userns, oci-crun,
// oci-runc, docker, none) with the loki-supervise flags that select it
// and the check of what it needs. A row's Require skips with the reason
// on a host that lacks it, and fails under CI=true (testutil's guards).
// A new backend is one row here; every suite that loops over the table
// runs it.
package backends
