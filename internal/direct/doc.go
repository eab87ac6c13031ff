// Package direct is the "none" isolation backend: the peer runs as a plain
// child of loki-supervise, in a session and process group of its own, with
// the caller's stdio passed straight through. There is no loki-init, no
// lease and no namespace.
//
// What is lost compared with the namespace backend, and must be said to
// users: if loki-supervise is killed with SIGKILL nothing ends the peer;
// descendants that leave the peer's process group (setsid, double fork) are
// not signalled when the session ends; the peer sees every host process and
// the whole filesystem with the caller's privileges. Termination requests go
// to the peer's process group, and the group is killed at the end of the
// session so well-behaved descendants do not outlive it.
package direct
