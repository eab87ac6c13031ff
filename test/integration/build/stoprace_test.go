package build

import (
	"fmt"
	"testing"
)

// A stop signals the runner's whole group: the runner's own children die
// with it, a moment later than the runner is reaped. They are not
// descendants that survived, so the reason must be `stopped` with a clean
// descendants outcome, every time; before dying processes were recognised
// this came out `descendants_terminated` about one run in three, so each
// case loops.
func TestStopWithChildrenInTheGroup(t *testing.T) {
	const rounds = 8
	for _, tc := range []struct {
		name, script, grace string
		rc, exit            int
	}{
		{"SIGTERM, foreground child", `echo up; sleep 60; :`, "10", -15, 143},
		{"SIGTERM, background child", `sleep 60 & echo up; wait`, "10", -15, 143},
		{"SIGKILL after the grace", `trap '' TERM; echo up; sleep 60; :`, "0.3", -9, 137},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < rounds; i++ {
				e := newEnv(t)
				e.vars = append(e.vars, "LOKI_BUILD_STOP_GRACE_SECONDS="+tc.grace)
				id := fmt.Sprintf("ffffffff-2222-4333-8444-%012d", i)
				s := e.start(id, e.buildArgs(id, e.runSh(tc.script))...)
				e.waitLog(id, "up")
				e.waitFor(id, "running", running)
				if _, errOut, code := e.cli("stop", id); code != 0 {
					t.Fatalf("stop: %d %s", code, errOut)
				}
				if got := s.exit(t); got != tc.exit {
					t.Fatalf("round %d: exit %d, want %d", i, got, tc.exit)
				}
				checkExited(t, e, id, e.record(id), tc.rc, "stopped", "stop_requested_at", "stop_signal_sent_at")
				if t.Failed() {
					t.Fatalf("round %d failed", i)
				}
			}
		})
	}
}
