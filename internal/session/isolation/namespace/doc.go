// Package namespace is the default isolation on Linux: loki-init becomes PID
// 1 of a new PID and mount namespace that loki-supervise creates itself, with
// no runtime or daemon involved.
//
// Go cannot run code between clone and exec, so the child is loki-init's
// binary started as the stage ("loki-init __stage ...", package stage). The
// stage is already PID 1 of the new namespace; it makes every mount
// private, mounts a fresh /proc, bind-mounts the control dir onto itself
// read-only, drops every capability on every thread, sets no_new_privs,
// and then goes on as loki-init in the same process, PID 1 still. The
// stage reports a failure on the status pipe, so the supervisor can tell
// "the backend could not start" (127) from anything the session itself
// exits with: an empty read at EOF means the stage confined the process
// and closed the pipe. This package is the supervisor's side: the stage's policy,
// the clone, the idmapped trees, the cgroup and the status pipe.
//
// Privilege model: when the supervisor is root, no user namespace is made
// and the peer keeps uid 0 but has no capabilities at all (empty permitted,
// effective, inheritable and ambient sets under no_new_privs), so it can
// neither remount nor unmount the read-only
// control dir, nor regain privileges through setuid binaries. Processes of
// the host are invisible in the new PID namespace. As root the peer's uid
// still owns root's files: this backend bounds the session's lifetime, it is
// not a filesystem sandbox (use the oci backend with a rootfs for that).
// When the supervisor is not root, a user namespace maps the caller's uid
// and gid to themselves; the stage holds CAP_SYS_ADMIN only as an ambient
// capability for its mounts and drops it before loki-init runs.
//
// The stage's parent-death signal is SIGKILL, so a dead supervisor usually
// takes the namespace down at once; that is a speed-up only. The guarantee
// is the lease.
package namespace
