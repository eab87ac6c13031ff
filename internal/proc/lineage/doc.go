//go:build unix

// Package lineage starts a runner so that everything it starts can be found
// and stopped, and then stops it.
//
// Guarantees:
//
//   - Start creates the runner as a new session leader (pid == pgid == sid)
//     behind an exec gate: the child is a re-executed copy of the calling
//     binary that blocks on a pipe until the runner's identity (pid + birth
//     token) has been recorded, and only then executes the real command. The
//     runner therefore cannot fork before it is tracked. Exec failures are
//     reported over a close-on-exec status pipe and map to 127 (not found),
//     126 (permission) and 125 (anything else); a runner that exits at once
//     after a successful exec is not a launch failure.
//   - Every process of the lineage is tracked as a (pid, birth identity) pair
//     and never by pid alone. A member whose pid now names another process is
//     gone and is never signalled; identity is re-checked right before every
//     signal.
//   - Membership (Refresh) follows supervision.md: the runner; children of live
//     members; the runner's session; on Linux, processes reparented to this
//     process (a child subreaper) that belong to the runner (same session,
//     same cgroup, or carrying the lineage token); and during a discovery
//     window after a fork, any process carrying the lineage token
//     (LOKI_DEADLINE_LINEAGE). Processes this supervisor started by other
//     means (git, ps, ...) are never adopted: a direct child of the supervisor
//     is a member only with positive evidence, never merely for being a child.
//   - Refresh cost grows with the lineage, not the host: it walks
//     /proc/PID/task/*/children from the members and the supervisor, and scans
//     all of /proc only inside the discovery window (or always, when the
//     kernel offers neither a subreaper nor children lists).
//   - Reconcile stops the lineage with the spec's constants (poll 20 ms,
//     quiescence 200 ms, margin 300 ms, budget max(g+0.2 s, 0.5 s), SIGTERM
//     phase ending 0.5 s before the budget) and reports an Outcome whose
//     slices are never nil. A member that is already dying (in do_exit, or
//     with SIGKILL pending: killed with the runner's group) is waited for,
//     never signalled or counted as detected, unless it outlasts the budget;
//     a cgroup still populated by such teardown is waited for (inotify on
//     cgroup.events) before it is judged.
//   - Where a writable cgroup v2 exists, the runner is born in its own cgroup
//     (clone3 CLONE_INTO_CGROUP); its members count as lineage and cgroup.kill
//     is the final guarantee. Containment says what was in force. Without it
//     everything degrades to subreaper + lineage tracking.
//   - On Linux every runner has a keeper, started before it: a process in
//     a session of its own that outlives a supervisor killed without
//     Close (kill -9) and then kills the runner's cgroup and every process
//     carrying the lineage token. Close releases it untouched.
//   - Zombies are reaped only by pid, only for members this process inherited
//     as a subreaper, never with wait(-1): os/exec owns its own children.
package lineage
