// Package oci is the oci isolation backend: it writes an OCI runtime
// bundle whose process is loki-init and runs it with crun or runc.
//
// The generated config (Config) promises: loki-init (bind-mounted read-only
// from the host at InitPath, so the rootfs needs no copy of it) is the
// container's process with the control dir as its argument; the control dir
// is bind-mounted read-only, nosuid, nodev, noexec at ControlPath; the
// container has its own PID, mount, IPC and UTS namespaces; every capability
// set is empty and noNewPrivileges is set; the root filesystem is read-only
// unless the caller asks otherwise (a tmpfs /tmp is provided); any view of
// the host's control root (every session's lease) that the rootfs or a bind
// would give is covered by an empty read-only tmpfs, and a rootfs or bind
// inside it is refused; a pids limit
// applies when the host has a pids cgroup controller. The host network is
// shared: agents talk to their model APIs. As root the container also has
// a user namespace of its own, mapping its root to unprivileged host ids,
// with writable binds idmapped (userns.go); a runtime that cannot idmap
// them is refused them.
//
// Each session gets a private bundle directory (0700) and a unique
// container id; Close always runs "<runtime> delete -f" and removes the
// bundle. The runtime's pid file tells a container that never started
// (127, the runtime printed why) from one whose init exited.
//
// The bundle lives in the session's private scratch dir and records the
// runtime flavour and container id (container.json). When a supervisor was
// killed, the next session's sweep of stale session dirs calls CleanStale
// (registered with session.OnStale) and "<runtime> delete -f" removes the
// runtime's state of that container before the dir goes; the record is
// untrusted, so only "crun"/"runc" resolved on PATH and ids of loki's own
// format are used.
//
// Limits live in the session's own cgroup too (internal/session/cgroup),
// which the runtime never removes: Wait reads what the kernel did at a
// limit from it after the container is gone, Close removes it. On cgroup
// v2 the container's cgroup is nested in it (linux.cgroupsPath); on v1,
// where a refused fork is counted only in the forker's own cgroup, Start
// moves the container's init into it from the runtime's pid file before
// it returns, so before the first lease renewal and the peer's birth.
//
// crun refuses to create containers on hybrid cgroup hosts (v1 controllers
// plus a cgroup2 mount that has controllers). On such a host crun is run
// through the hidden ShimCommand stage: a private mount namespace in which
// /sys/fs/cgroup/unified is hidden under an empty tmpfs, so crun uses the v1
// hierarchies (pids limit included) and nothing changes on the host.
package oci
