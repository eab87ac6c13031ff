// Package pid1 is loki-init: the trusted PID 1 of an agent's private PID
// namespace. The host lease, not the agent's cooperation, owns the
// namespace; this package is the part that enforces it from the inside.
//
// Run goes through fixed stages (initialization, first-lease,
// initial-renewal, launch-input, peer-spawn, supervision) and promises:
//
//   - it refuses to run unless it is PID 1, and makes itself non-dumpable
//     before it spawns anything, so the peer (same uid, no capabilities)
//     can neither ptrace it nor read /proc/1/{environ,mem,fd};
//   - nothing is read from stdin, and nothing is started, before a lease
//     renewal has been observed after start; from then on, a lease that is
//     not renewed for the lease duration ends the process with 124 at any
//     stage, including while it waits for prelude bytes or for output;
//   - exactly the prelude is read from stdin, never one byte more: the rest
//     belongs to the peer;
//   - the peer runs in its own session on its own pipes; its stdout and
//     stderr reach fd 1 and fd 2 byte for byte, and output that cannot be
//     delivered ends the run with 125 (never with the peer's code);
//   - every orphan is reaped (by internal/reap, the only waiter), and the
//     exit code follows architecture.md Contract 3 through internal/exitcode;
//   - a refusal prints one fixed line, "ACP supervisor refused at <stage>:
//     <class>", where class is a constant word: launch data (argv, env,
//     cwd) never reaches stderr.
//
// When Run returns, the caller exits at once. As PID 1, exiting is what
// kills everything left in the namespace.
package pid1
