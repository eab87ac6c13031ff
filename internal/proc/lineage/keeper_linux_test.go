package lineage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

// keeperScript leaves a setsid'd grandchild that keeps the token, a
// double-forked orphan, and an escapee that cleared its environment
// (found only by the cgroup, so only where there is one), then waits: what the parent-death signal
// would leave alive when the supervisor is killed.
func keeperScript(dir string, anonymous bool) string {
	s := fmt.Sprintf(`setsid sh -c 'sleep 300 & echo $! >> %[1]s/pids; wait' &
(sh -c 'sleep 300 & echo $! >> %[1]s/pids' &)
`, dir)
	if anonymous {
		s += fmt.Sprintf("env -i /usr/bin/setsid /bin/sh -c 'sleep 300 & echo $! > %s/anon; wait' &\n", dir)
	}
	return s + "wait"
}

// dieWithoutRelease is what the supervisor's death looks like to the
// keeper: its pipe closes without "done". The runner itself is killed as
// its parent-death signal would.
func dieWithoutRelease(r *Runner) {
	r.keeper.w.Close()
	<-r.keeper.exited
	signalVerified(r.id, 9)
}

// TestKeeperEndsTheLineageWhenTheSupervisorDies: every descendant,
// setsid'd, double-forked or without the token, dies once the keeper's
// pipe closes unreleased, and the keeper removes the cgroup.
func TestKeeperEndsTheLineageWhenTheSupervisorDies(t *testing.T) {
	testutil.RequireCommand(t, "setsid")
	for _, m := range modes[:2] {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			r, _ := startInMode(t, m, keeperScript(dir, m.cgroup))
			if r.keeper == nil {
				t.Fatal("no keeper started; containment " + r.Containment())
			}
			ids := waitPIDs(t, filepath.Join(dir, "pids"), 2)
			if m.cgroup {
				ids = append(ids, waitPIDs(t, filepath.Join(dir, "anon"), 1)...)
			}
			dieWithoutRelease(r)
			if !testutil.WaitUntil(20*time.Second, func() bool { return len(testutil.Alive(ids)) == 0 }) {
				t.Fatalf("alive after the keeper's turn: %v", testutil.Alive(ids))
			}
			if n := len(tokenHolders(t, r.Token())); n != 0 {
				t.Fatalf("%d processes still carry the token", n)
			}
			if g := r.tr.group; g != nil && !testutil.WaitUntil(5*time.Second, func() bool { _, err := os.Stat(g.dir); return os.IsNotExist(err) }) {
				t.Fatalf("cgroup %s left behind", g.dir)
			}
		})
	}
}

// TestReleasedKeeperTouchesNothing: after Close the keeper exits at once
// and kills nothing, even a process that still carries the token.
func TestReleasedKeeperTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	cgroupEnabled = false
	r, _ := startSh(t, `sh -c 'sleep 300 & echo $! > `+dir+`/p' & wait`)
	cgroupEnabled = true
	ids := waitPIDs(t, filepath.Join(dir, "p"), 1)
	t.Cleanup(func() { KillByToken(r.Token(), 10) })
	k := r.keeper
	if k == nil {
		t.Fatal("no keeper started")
	}
	r.Close()
	select {
	case <-k.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("released keeper still running")
	}
	if len(testutil.Alive(ids)) != 1 {
		t.Fatal("a released keeper killed a member")
	}
}
