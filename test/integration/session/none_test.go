//go:build linux

package session

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
)

// TestNoneKillsEscapedDescendants: under --isolation none the peer
// double-forks a sleeper into a session of its own (setsid), prints its pid,
// then exits 3 when stdin closes. The sleeper left the peer's process group
// and session, yet it must be gone by the time loki-supervise has exited,
// and the exit code is still the peer's.
func TestNoneKillsEscapedDescendants(t *testing.T) {
	testutil.RequireCommand(t, "setsid")
	script := `(setsid sh -c 'sleep 1000 </dev/null >/dev/null 2>&1 & echo $!') ; read -r _; exit 3`
	cmd := supervise(t, get("none"), nil, "sh", "-c", script)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := newLineReader(stdout).next(t, 60*time.Second)
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("peer printed %q, want the sleeper's pid", line)
	}
	sleeper, err := procid.Capture(pid)
	if err != nil {
		t.Fatalf("sleeper %d is not alive before the session ends: %v", pid, err)
	}
	t.Cleanup(func() { testutil.KillLeftovers([]procid.Identity{sleeper}) })
	peer := runnerOf(t, cmd.Process.Pid)
	st, err := procid.Stat(pid)
	if err != nil || st.SID == peer || st.PGID == peer {
		t.Fatalf("sleeper %d is still in the peer's session or group (stat %+v, %v): the test is blind", pid, st, err)
	}
	stdin.Close()
	if code := testutil.WaitExit(t, cmd, generous); code != 3 {
		t.Fatalf("exit %d, want the peer's 3 (stderr %q)", code, stderr.String())
	}
	// Wait returned only after the lineage was stopped: no grace here.
	if sleeper.Matches() {
		t.Fatalf("escaped sleeper %v survived the session", sleeper)
	}
}

// runnerOf finds the peer under --isolation none: the supervisor's child
// that leads its own session.
func runnerOf(t *testing.T, supervisor int) int {
	t.Helper()
	for _, id := range descendants(supervisor) {
		st, err := procid.Stat(id.PID())
		if err == nil && st.PPID == supervisor && st.SID == id.PID() {
			return id.PID()
		}
	}
	t.Fatal("the peer (a session leader child of the supervisor) was not found")
	return 0
}
