// Package reap is the one waiter of the init process.
//
// As PID 1 of a namespace the init inherits every orphan, and the kernel
// keeps each of them as a zombie until someone waits for it. Reaper collects
// them with wait4(-1, WNOHANG) and is the only code in the process allowed to
// call wait: a second waiter (for instance exec.Cmd.Wait) would race with it
// and could lose the peer's status to a sweep. Guarantees:
//
//   - every child that exits is waited for exactly once, by this package;
//   - the status of the one child registered as the peer is kept, whichever
//     call happened to collect it (a sweep or a direct check);
//   - a sweep does a bounded amount of work, so a peer that forks without
//     end cannot keep the caller from its other duties (lease checks). The
//     caller re-arms a sweep when Sweep reports that more may be pending.
//
// Reaper does not decide exit codes: internal/exitcode and the init do.
package reap
