//go:build unix

// Package session runs one agent session: the peer command as the child of
// a fresh loki-init, inside whatever isolation a Backend provides, with the
// supervisor holding the lease.
//
// What Run guarantees:
//   - The control dir is private to the supervisor (a 0700 directory under a
//     0700 root owned by the caller, outside the workspace), the first lease
//     is written before the backend starts, and it is removed when Run ends.
//   - Every session dir records its owner (pid, birth token, PID namespace)
//     before anything else is put in it. A dir left by a supervisor that was
//     killed is removed by the next session, but only on proof that its
//     owner is dead; any doubt keeps it.
//   - The lease is renewed on a ticker for as long as Run waits for the
//     backend, and never after: if this process dies, renewals stop and the
//     init ends the session within the lease duration plus one poll.
//   - The launch prelude is the first thing on the init's stdin; then the
//     caller's stdin follows byte for byte, and its EOF closes the init's
//     stdin (moved with splice(2) where it can be). A stdin that fails
//     (other than by EOF) is reported and never passes as a clean run. The
//     init's stdout and stderr are the caller's own descriptors, so output
//     is never buffered, reordered or mixed by the supervisor. Where the
//     caller's stdin and stdout are pipes or sockets and the backend can
//     pass a descriptor (Request.HostStdin), there is no relay at all: the
//     peer gets the caller's own descriptors, and loki-init observes EOF,
//     lost and held output on them.
//   - The first renewal the init needs after its start comes as soon as the
//     init is seen reading its baseline (or, lacking notifications, within
//     a 1 ms-doubling backoff), so the lease costs start-up almost nothing.
//   - The peer's environment is exactly the launch spec's env (built by
//     internal/session/peerenv); the init itself runs with an empty environment.
//   - SIGTERM/SIGINT are forwarded once; if the session has not ended after
//     StopTimeout (or on a second signal) it is killed.
//   - The exit code is decided once, here, through internal/exitcode:
//     the session's own code (Contract 3), 128+N when signal N to the
//     supervisor ended it (forwarded, and the peer ended by it: the init's
//     125 then means that, its line says so) or had to be followed by a
//     kill, 125 when the init died by a signal it did not choose, 127 when
//     the backend could not start.
package session
