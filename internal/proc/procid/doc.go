//go:build unix

// Package procid names processes by (pid, birth token), never by pid alone.
//
// A birth token records when a process started: on Linux
// "proc:<boot_id>:<starttime ticks>" from /proc/PID/stat, on macOS
// "darwin:<sec>:<usec>" from sysctl kern.proc.pid, elsewhere a "ps:" token
// from `ps -o lstart=`. Only the first two are precise enough to authorise a
// signal (SignalSafe). An Identity can only be made by this package, from a
// live process with a signal-safe token (Capture) or from a recorded pair
// whose token is well formed (Restore); holding one proves nothing about the
// present, so callers re-check with Matches immediately before any signal.
package procid
