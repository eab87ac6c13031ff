// Package sysmon slows the Go runtime's monitor thread in a short-lived
// process that cares about its start-up.
//
// The runtime's sysmon thread polls every 20 µs while any P is busy or
// in a system call, backing off only after 50 quiet polls; with the
// kernel's default 50 µs timer slack each poll is a wake-up of its own:
// ~80 in a 12 ms supervisor and ~45 in its stage and init, each a
// context switch that steals a vCPU from the session's start. Calm gives
// that one thread a coarser timer slack, so the kernel may batch its
// sleeps.
//
// Guarantees:
//   - Only the monitor thread changes, and only its timer slack: no
//     thread that runs goroutines, no timer of the program, no child
//     (the monitor never forks) sees another value.
//   - Best effort and silent: without CAP_SYS_NICE over the thread
//     (an unprivileged supervisor) or without /proc, nothing changes.
package sysmon

import "time"

// Slack is the monitor's timer slack: its polls may then land up to a
// millisecond late, against a 10 ms preemption tick and a 10 ms netpoll
// fallback it serves.
const Slack = time.Millisecond
