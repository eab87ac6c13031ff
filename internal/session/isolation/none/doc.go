//go:build unix

// Package none is the "none" isolation backend: no loki-init, no lease and
// no namespace. The peer is started through internal/proc/lineage, so it is born
// a session leader behind an exec gate (it cannot fork before it is
// tracked), and everything it starts is followed as its lineage: children,
// its session, orphans that come back to the supervisor as child subreaper
// with evidence (same session, the lineage token, the runner's cgroup), and,
// where a writable cgroup v2 exists, the whole cgroup.
//
// What the backend guarantees:
//   - when the peer exits, every remaining member of its lineage (also
//     descendants that double-forked and called setsid) is killed before
//     Wait returns; the session's code is still the peer's own, as with
//     loki-init, whose namespace dies with the peer;
//   - if the lineage can no longer be observed, or a member survives the
//     kill, Wait says so (Exit.Escaped) and the session exits 125: the run
//     is reported as uncontained, never as clean;
//   - termination requests go to every live member, each checked by its
//     birth identity right before the signal, so a reused pid is never hit.
//
// What is lost compared with the namespace backend, and must be said to
// users: if loki-supervise itself is killed with SIGKILL nothing ends the
// peer (there is no lease); a descendant that clears its environment, calls
// setsid and is orphaned between two refreshes is found only through the
// cgroup; the peer sees every host process and the whole filesystem with the
// caller's privileges.
package none
