//go:build linux

package faults

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
)

// escapees is a runner that leaves a child in its group, a setsid'd
// grandchild in a session of its own and a double-forked orphan, writes
// each one's pid, then waits.
const escapees = `sleep 1000 & echo $! > "$D/child"
setsid sh -c 'echo $$ > "$D/setsid"; exec sleep 1000' &
(sh -c 'sleep 1000 & echo $! > "$D/orphan"' &)
while [ ! -s "$D/setsid" ] || [ ! -s "$D/orphan" ]; do sleep 0.02; done
echo $$ > "$D/leader"; wait`

// escapeesIn is escapees writing its pid files into dir (the runner's
// environment is an allowlist, so the dir is in the script).
func escapeesIn(dir string) string { return strings.ReplaceAll(escapees, "$D", dir) }

// TestRunSupervisorKill9: kill -9 of a run's supervisor. The runner dies
// with it (parent death signal) and the keeper ends its descendants
// (setsid and double-forked ones included); status shows a terminal state
// instead of "running" forever; stop finds nothing left to kill and
// records exited (supervisor_lost).
func TestRunSupervisorKill9(t *testing.T) {
	data := t.TempDir()
	env := baseEnv(data)
	d := t.TempDir()
	id := "f0000000-0000-4000-8000-0000000000d1"
	procs := killSupervisor(t, env, d, "run", "--execution-id", id, "--workspace", d)
	if !testutil.WaitUntil(wait, func() bool { return len(testutil.Alive(procs)) == 0 }) {
		t.Fatalf("alive %v after kill -9 of a run supervisor: %v", wait, testutil.Alive(procs))
	}
	if s := cli(t, env, "status", id); s.code != 0 || !strings.Contains(s.stdout, "lost (supervisor lost") {
		t.Fatalf("status after kill -9: exit %d, stdout %q", s.code, s.stdout)
	}
	o := cli(t, env, "stop", id)
	if o.code != 0 || !strings.Contains(o.stdout, "recorded as exited (supervisor_lost)") {
		t.Fatalf("stop: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	if !testutil.WaitUntil(wait, func() bool { return len(testutil.Alive(procs)) == 0 }) {
		t.Fatalf("left alive after stop: %v", testutil.Alive(procs))
	}
	st := record(t, data, id)
	if st.Str(state.FieldState) != state.StateExited || st.Str(state.FieldTerminationReason) != state.ReasonSupervisorLost {
		t.Fatalf("record after stop: %v", st)
	}
	if l := cli(t, env, "list"); !strings.Contains(l.stdout, "exited (supervisor_lost)") {
		t.Fatalf("list: %q", l.stdout)
	}
}

// TestNoneSupervisorKill9: kill -9 of a `session --isolation none`
// supervisor. The peer dies with it (parent death signal) and the
// lineage's keeper, which outlives the supervisor, ends the rest: the
// child in its group, the setsid'd grandchild and the double-forked
// orphan.
func TestNoneSupervisorKill9(t *testing.T) {
	d := t.TempDir()
	procs := killSupervisor(t, baseEnv(t.TempDir()), d, "session", "--isolation", "none")
	if !testutil.WaitUntil(wait, func() bool { return len(testutil.Alive(procs)) == 0 }) {
		t.Fatalf("alive %v after kill -9 of a none supervisor: %v", wait, testutil.Alive(procs))
	}
}

// killSupervisor starts loki-supervise with args around the escapees of
// dir, waits until all four have written their pids, kills the supervisor
// with SIGKILL and reaps it. It returns the four identities (leader
// first); the test's cleanup ends whichever are left.
func killSupervisor(t *testing.T, env []string, dir string, args ...string) []procid.Identity {
	t.Helper()
	args = append(args, "--", "/bin/sh", "-c", escapeesIn(dir))
	cmd := exec.Command(testutil.Binary(t, "loki-supervise"), args...)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := testutil.Wait(cmd)
	procs := waitPIDs(t, dir, "leader", "child", "setsid", "orphan")
	t.Cleanup(func() { testutil.KillLeftovers(procs) })
	w.Kill()
	return procs
}

// waitPIDs waits for the runner to write each named pid file and returns
// the identities, in order.
func waitPIDs(t *testing.T, dir string, names ...string) []procid.Identity {
	t.Helper()
	var out []procid.Identity
	for _, n := range names {
		p := filepath.Join(dir, n)
		var pid int
		if !testutil.WaitUntil(wait, func() bool {
			b, err := os.ReadFile(p)
			pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
			return err == nil && pid > 0
		}) {
			t.Fatalf("no pid in %s", p)
		}
		id, err := procid.Capture(pid)
		if err != nil {
			t.Fatalf("%s (pid %d): %v", n, pid, err)
		}
		out = append(out, id)
	}
	return out
}
