// Package cgroup gives one session a cgroup of its own, with the
// session's limits (pids, memory, CPU) written before its first process
// joins, on cgroup v1 (hybrid hosts included: the controllers are where
// the v1 hierarchies are) and on cgroup v2.
//
// Guarantees: a cgroup is made under the supervisor's own (v1: a child of
// its cgroup in each controller's hierarchy; v2: a sibling, since a v2
// cgroup with processes cannot delegate controllers), so the limits of
// whatever contains the supervisor still apply to the session. A limit
// that cannot be written is an error, never skipped. Start starts a
// process born in the cgroup (v2: CLONE_INTO_CGROUP; v1: forked by a
// thread that moved itself in, and back out, for the fork), so it never
// runs outside it and is never migrated. Remove kills what is
// left in the cgroup (identity-checked: only processes still in it) and
// removes it; CleanStale does the same for the cgroups a killed
// supervisor recorded in its session's dir. Hit reads what the
// kernel did at a limit: OOM kills (memory.events or v1 memory.oom_control
// oom_kill, kernel 4.13 or later) and refused forks (pids.events max).
// A container runtime's session uses it too: nested on v2 (UnifiedPath),
// and on v1 its init adopted (Adopt, identity-checked), so the counters
// outlive the runtime's own cgroup; Remove takes nested cgroups first.
package cgroup
