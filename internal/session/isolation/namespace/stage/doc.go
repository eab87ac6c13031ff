// Package stage is the namespace backend's stage: the first code to run
// as PID 1 of a session's new namespaces, inside loki-init's own binary
// (loki-init Command ...). It makes every mount private, applies the
// filesystem policy, mounts a fresh /proc, masks the control root and
// binds the session's control dir back read-only, brings up loopback,
// hands over the egress listener, switches to --user, empties the
// capability sets, sets no_new_privs and installs the session's syscall
// policy (package seccomp; with a listener sent to the supervisor when
// Policy.NotifyFD is set, keeping no copy), and then hands over to loki-init in the same
// process, which stays PID 1: there is no exec between the two. The Landlock scope is the one
// confinement it leaves to loki-init (Run's scope result): a Landlock
// domain is per thread, and PID 1's threads in sibling domains could not
// read the peer's /proc, so only the thread that forks the peer takes it.
//
// Guarantees: Run never lets loki-init start less confined than Policy
// says, on any thread: every privilege change applies to all threads of
// the process at once (privileges_linux.go; no_new_privs reaches the
// other threads with the filter's TSYNC), so neither the init nor a
// peer forked from any of its threads holds a capability, lacks
// no_new_privs or the seccomp filter, or runs as other ids. Any step that fails is reported on the status pipe
// (StatusFD) and the stage exits 127; the stage closes the pipe once the
// process is confined, and that EOF with nothing read tells the
// supervisor so. The stage's own descriptors are closed before it hands
// over; any other above stderr is close-on-exec, so only stdio and
// HostStdinFD (when Policy.HostStdin) can reach the peer. loki-init gets
// an empty environment, and the parent-death signal the credential
// changes cleared is armed again.
//
// The package is linked into loki-init: it may use confine,
// egress/handoff and the exit codes, nothing of the supervisor.
package stage
