package testutil

import (
	"syscall"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// WaitUntil polls cond every 10 ms until it holds (true) or timeout passes
// (false). For states no event announces, such as a process leaving /proc
// or a file another process creates.
func WaitUntil(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Alive filters the identities that still name their live process.
func Alive(ids []procid.Identity) []procid.Identity {
	var out []procid.Identity
	for _, id := range ids {
		if id.Matches() {
			out = append(out, id)
		}
	}
	return out
}

// KillLeftovers is the cleanup of tests that orphan processes on purpose:
// it SIGKILLs, by verified identity only, whatever of them is still alive.
func KillLeftovers(ids []procid.Identity) {
	for _, id := range Alive(ids) {
		syscall.Kill(id.PID(), syscall.SIGKILL)
	}
}
