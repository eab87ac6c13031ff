// Package soak holds the load and kill -9 soak of loki: many concurrent
// `loki-supervise session` runs through the namespace backend, each relaying
// a large deterministic stream both ways and a burst of interactive round
// trips, and many concurrent durable `loki-supervise run` executions stopped
// from another process at random moments. It proves with numbers that no
// byte is lost, no exit code is misreported, no state.json is ever torn,
// nothing leaks (processes, namespaces, control dirs, descriptors), and
// that a supervisor killed with SIGKILL takes its whole session down within
// the lease bound. The size is set by LOKI_SOAK_* variables (CI defaults
// here, full size from bench/soak.sh); the figures are logged as a table.
package soak
