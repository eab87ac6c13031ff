package lineage

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

// escape is a runner script that leaves processes behind; it records the
// escapees' pids in $PIDS.
type escape struct {
	name   string
	script string
	pids   int  // escapees the script records
	kill   bool // SIGTERM is ignored: SIGKILL must be needed
}

var escapes = []escape{
	{"background job", `sleep 300 & echo $! > "$PIDS"`, 1, false},
	{"double fork", `( ( sleep 300 & echo $! > "$PIDS" ) & ) ; exit 0`, 1, false},
	{"setsid and double fork", `setsid sh -c 'sleep 300 & echo $! > "$PIDS"' & wait`, 1, false},
	{"child ignoring SIGTERM", `sh -c 'trap "" TERM; echo $$ > "$PIDS"; while :; do sleep 1; done' & exit 0`, 1, true},
	{"continuous forking", `sh -c 'trap "" TERM; echo $$ > "$PIDS"; i=0; while [ $i -lt 60 ]; do sleep 300 & i=$((i+1)); sleep 0.02; done; wait' & exit 0`, 1, true},
	{"grandchild closes fds and changes group", `python3 -c '
import os, time
if os.fork() == 0:
    os.setpgid(0, 0)
    with open(os.environ["PIDS"], "w") as f:
        f.write(str(os.getpid()))
    os.closerange(0, 4096)
    time.sleep(300)
' & wait`, 1, false},
	{"process re-execing itself", `sh -c 'echo $$ > "$PIDS"; exec sh -c "exec sh -c \"exec sleep 300\""' & exit 0`, 1, false},
}

// mode is one way the tracker can be made to work.
type mode struct {
	name   string
	cgroup bool
	apply  func(*tracker)
}

var modes = []mode{
	{"cgroup+subreaper", true, func(*tracker) {}},
	{"subreaper", false, func(*tracker) {}},
	// As on a kernel without children lists or subreaper: every refresh
	// scans the host (parent links, session and lineage token only).
	{"full-scan", false, func(tr *tracker) { tr.treeWalk, tr.subreaper = false, false }},
}

func startInMode(t *testing.T, m mode, script string) (*Runner, string) {
	t.Helper()
	cgroupEnabled = m.cgroup
	r, pidfile := startSh(t, script)
	cgroupEnabled = true
	r.tr.mu.Lock()
	m.apply(r.tr)
	r.tr.mu.Unlock()
	if m.cgroup && r.tr.group == nil {
		if testutil.InCI() {
			t.Fatal("CI=true but no writable cgroup v2: containment is " + r.Containment())
		}
		t.Skip("no writable cgroup v2 on this host: containment is " + r.Containment())
	}
	if !m.cgroup && r.tr.group != nil {
		t.Fatal("cgroup in force although disabled")
	}
	return r, pidfile
}

// Every escape must end with zero survivors, checked two ways: the pids the
// script recorded (by identity, zombies included) and a scan of the whole
// host for the run's lineage token. Each containment mode must hold alone.
func TestEscapesAreContained(t *testing.T) {
	testutil.RequireCommand(t, "setsid")
	testutil.RequireCommand(t, "python3")
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			for _, e := range escapes {
				t.Run(e.name, func(t *testing.T) { checkEscape(t, m, e) })
			}
		})
	}
}

func checkEscape(t *testing.T, m mode, e escape) {
	r, pidfile := startInMode(t, m, e.script)
	ids := waitPIDs(t, pidfile, e.pids)
	waitDone(t, r, 30*time.Second)
	if err := r.Refresh(); err != nil { // as the supervisor's run loop would
		t.Fatal(err)
	}
	out := r.Reconcile(time.Second)
	t.Logf("containment %s, outcome %+v", r.Containment(), out)
	if !out.Checked || !out.Detected || !out.Quiescent || out.Error != "" {
		t.Fatalf("outcome %+v: want checked, detected, quiescent, no error", out)
	}
	if len(out.RemainingPIDs) != 0 {
		t.Fatalf("remaining %v", out.RemainingPIDs)
	}
	if e.kill && len(out.KillSent) == 0 {
		t.Fatalf("a SIGTERM-proof member needs SIGKILL: %+v", out)
	}
	requireGone(t, ids)
	if left := tokenHolders(t, r.Token()); len(left) != 0 {
		t.Fatalf("processes with the lineage token survived: %v", left)
	}
	for _, id := range ids {
		if !contains(out.TermSent, id.PID()) {
			t.Errorf("recorded escapee %d not in term_sent %v", id.PID(), out.TermSent)
		}
	}
}

// An escapee that cleared its environment, left the session and was
// reparented carries no evidence but its cgroup.
func TestCgroupCatchesAnonymousEscapee(t *testing.T) {
	testutil.RequireCommand(t, "setsid")
	pidfile := filepath.Join(t.TempDir(), "anon")
	script := fmt.Sprintf(`env -i /usr/bin/setsid /bin/sh -c 'sleep 300 & echo $! > %s' & wait`, pidfile)
	r, _ := startInMode(t, modes[0], script)
	ids := waitPIDs(t, pidfile, 1)
	waitDone(t, r, 30*time.Second)
	out := r.Reconcile(time.Second)
	if !out.Detected || !out.Quiescent || !contains(out.TermSent, ids[0].PID()) {
		t.Fatalf("outcome %+v, escapee %d", out, ids[0].PID())
	}
	requireGone(t, ids)
}

// A runner whose children all exited is clean: nothing detected.
func TestCleanRunner(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r, _ := startInMode(t, m, `ls / > /dev/null; echo done | cat > /dev/null; exit 0`)
			waitDone(t, r, 30*time.Second)
			start := time.Now()
			out := r.Reconcile(2 * time.Second)
			if !out.Checked || out.Detected || !out.Quiescent || out.Error != "" ||
				len(out.TermSent)+len(out.KillSent)+len(out.RemainingPIDs) != 0 {
				t.Fatalf("outcome %+v: want a clean, quiescent check", out)
			}
			if d := time.Since(start); d < quiescence {
				t.Fatalf("quiescent after %v, before the quiescence period", d)
			}
		})
	}
}

// Reconcile keeps to its budget plus the scheduling margin (with a generous
// allowance for a loaded machine) when a member ignores SIGTERM, and sends
// SIGKILL only after the SIGTERM phase.
func TestReconcileBudget(t *testing.T) {
	r, pidfile := startSh(t, `sh -c 'trap "" TERM; echo $$ > "$PIDS"; while :; do sleep 1; done' & exit 0`)
	ids := waitPIDs(t, pidfile, 1)
	waitDone(t, r, 30*time.Second)
	grace := time.Second
	start := time.Now()
	out := r.Reconcile(grace)
	took := time.Since(start)
	if limit := budget(grace) + schedulingMargin + 3*time.Second; took > limit {
		t.Fatalf("reconcile took %v, limit %v", took, limit)
	}
	if took < budget(grace)-killPhase {
		t.Fatalf("reconcile took %v: the SIGTERM phase was cut short", took)
	}
	if !out.Quiescent || len(out.KillSent) == 0 {
		t.Fatalf("outcome %+v", out)
	}
	requireGone(t, ids)
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
