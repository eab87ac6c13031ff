package lineage

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// A stop kills the runner's whole process group. Its members die with the
// runner, but the kernel tears them down a little later: right after the
// runner is reaped they can still be listed (with SIGKILL pending, or in
// do_exit) and their cgroup still reads populated. None of that is a
// descendant that survived: the outcome must be clean, every time. The
// race hit about one run in three before dying processes were recognised,
// so each case loops.
func TestGroupKilledWithRunnerIsNotDetected(t *testing.T) {
	const rounds = 15
	scripts := []struct{ name, script string }{
		{"background child", `sleep 60 & echo $! > "$PIDS"; wait`},
		{"foreground child", `sh -c 'echo $$ > "$PIDS"; exec sleep 60'; :`},
	}
	for _, m := range modes[:2] {
		for _, sc := range scripts {
			t.Run(m.name+"/"+sc.name, func(t *testing.T) {
				for i := 0; i < rounds; i++ {
					checkGroupKill(t, m, sc.script, i)
				}
			})
		}
	}
}

func checkGroupKill(t *testing.T, m mode, script string, round int) {
	t.Helper()
	r, pidfile := startInMode(t, m, script)
	defer r.Close()
	ids := waitPIDs(t, pidfile, 1)
	if err := r.Refresh(); err != nil { // the child is a tracked member
		t.Fatal(err)
	}
	if err := unix.Kill(-r.PID(), unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitDone(t, r, 30*time.Second)
	out := r.Reconcile(500 * time.Millisecond)
	if out.Detected || !out.Quiescent || out.Error != "" ||
		len(out.TermSent)+len(out.KillSent)+len(out.RemainingPIDs) != 0 {
		t.Fatalf("round %d: outcome %+v: members killed with the group are not descendants", round, out)
	}
	requireGone(t, ids)
}

// A descendant that was alive and well when the runner died is still
// detected, even when the runner's group was killed as well: only dying
// processes are forgiven.
func TestSurvivorOfGroupKillIsDetected(t *testing.T) {
	for _, m := range modes[:2] {
		t.Run(m.name, func(t *testing.T) {
			r, pidfile := startInMode(t, m, `setsid sleep 60 & echo $! > "$PIDS"; wait`)
			defer r.Close()
			ids := waitPIDs(t, pidfile, 1)
			waitOwnSession(t, ids[0].PID())
			if err := r.Refresh(); err != nil {
				t.Fatal(err)
			}
			unix.Kill(-r.PID(), unix.SIGKILL)
			waitDone(t, r, 30*time.Second)
			out := r.Reconcile(500 * time.Millisecond)
			if !out.Detected || !out.Quiescent || !contains(out.TermSent, ids[0].PID()) {
				t.Fatalf("outcome %+v: the setsid child %d survived the group kill", out, ids[0].PID())
			}
			requireGone(t, ids)
		})
	}
}

// waitOwnSession waits until pid has left the runner's group by setsid:
// $! names the child before it has called setsid(2), and a group kill
// that comes first would kill it as a member, not leave a survivor.
func waitOwnSession(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if st, err := procid.Stat(pid); err == nil && st.SID == pid {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not become a session leader within 30 s", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestDyingParsing(t *testing.T) {
	tests := []struct {
		name   string
		stat   string
		status string
		flags  uint64
		killed bool
	}{
		{"running", "12 (sh) S 1 12 12 0 -1 4194560 0 0", "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n", 4194560, false},
		{"exiting, name with spaces and parens", "12 (a) b) R 1 12 12 0 -1 4194628 0", "SigPnd:\t0000000000000000\n", 4194628, false},
		{"SIGKILL pending on the thread", "12 (sh) S 1 12 12 0 -1 0", "SigPnd:\t0000000000000100\nShdPnd:\t0000000000000000\n", 0, true},
		{"SIGKILL pending on the process", "12 (sh) S 1 12 12 0 -1 0", "SigPnd:\t0000000000000000\nShdPnd:\t0000000000004100\n", 0, true},
		{"SIGTERM pending only", "12 (sh) S 1 12 12 0 -1 0", "SigPnd:\t0000000000004000\nShdPnd:\t0000000000004000\n", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The rest of a stat line, up to and past starttime.
			st, err := procid.ParseStat([]byte(tc.stat + strings.Repeat(" 0", 42)))
			if err != nil || st.Flags != tc.flags {
				t.Errorf("ParseStat(%q).Flags = %d, %v; want %d", tc.stat, st.Flags, err, tc.flags)
			}
			if got := sigkillPending([]byte(tc.status)); got != tc.killed {
				t.Errorf("sigkillPending = %v, want %v", got, tc.killed)
			}
		})
	}
	if (procSource{root: "/proc"}).dying(1 << 30) {
		t.Error("a missing process is reported dying: unreadable must never forgive")
	}
}
