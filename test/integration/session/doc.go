// Package session holds the end-to-end tests of `loki-supervise session`:
// the real loki-supervise and loki-init binaries, real namespaces and real
// crun/runc containers, real signals. Every test bounds its waits, kills
// only processes it identified as its own (by pid and birth time), and
// needs root (CI runs it as root).
package session
