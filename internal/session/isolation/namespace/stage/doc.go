// Package stage is the namespace backend's stage: the first code to run
// as PID 1 of a session's new namespaces, inside loki-init's own binary
// (loki-init Command ...). It makes every mount private, applies the
// filesystem policy, mounts a fresh /proc, masks the control root and
// binds the session's control dir back read-only, brings up loopback,
// hands over the egress listener, empties the capability sets, switches
// to --user, sets no_new_privs, installs the keyring seccomp filter and
// the Landlock scope, and then execs loki-init, which keeps PID 1.
//
// Guarantee: Run never lets loki-init start less confined than Policy
// says. Any step that fails is reported on the status pipe (StatusFD,
// close-on-exec) and the stage exits 127 without exec'ing; an empty read
// at EOF tells the supervisor the exec succeeded. Only stdio, and
// HostStdinFD when Policy.HostStdin, cross the exec.
//
// The package is linked into loki-init: it may use confine, landlock,
// egress/handoff and the exit codes, nothing of the supervisor.
package stage
