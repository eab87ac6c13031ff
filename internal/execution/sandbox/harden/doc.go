// Package harden is what the exec gate does to a confined runner beside
// its Landlock ruleset, for what Landlock does not cover: the runner execs
// with no capabilities at all (bounding, permitted, effective, inheritable
// and ambient sets empty; no_new_privs, so no set-uid bit or file
// capability gives any back) and under seccomp's RunnerPolicy, compiled
// by the session's one compiler (internal/session/seccomp): clone3 fails
// with ENOSYS (libc falls back to clone, which cannot name a cgroup: no
// CLONE_INTO_CGROUP out of the lineage), so does io_uring (whose
// operations seccomp cannot see) and i386's socketcall; MPTCP sockets and
// IP_LOCAL_PORT_RANGE (both outside Landlock's TCP port rules) are
// refused; x32 is refused whole. The capability drop binds only the
// calling thread: the caller must be locked to it and exec from it.
//
// It also keeps a supervisor's own secrets from a same-uid process that
// lacks CAP_SYS_PTRACE: HideSelf makes the supervisor non-dumpable, so
// its /proc/PID/environ, fd and mem are closed to such a reader.
package harden
