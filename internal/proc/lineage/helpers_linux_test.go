package lineage

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
)

// testEnv is a minimal environment for runners started by tests.
func testEnv(extra ...string) []string {
	return append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}, extra...)
}

// startSh starts `sh -c script` with PIDS pointing at a file in a temp dir.
func startSh(t *testing.T, script string) (*Runner, string) {
	t.Helper()
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	r, err := Start(Command{Args: []string{"sh", "-c", script}, Dir: dir, Env: testEnv("PIDS=" + pids)})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		// Whatever a failed test left behind: stop it, by identity only.
		r.Reconcile(0)
		r.Close()
	})
	return r, pids
}

func waitDone(t *testing.T, r *Runner, within time.Duration) {
	t.Helper()
	select {
	case <-r.Done():
	case <-time.After(within):
		t.Fatalf("runner %d still running after %v", r.PID(), within)
	}
}

// waitPIDs waits (bounded) until the file lists at least n live pids and
// returns their identities, captured while they live.
func waitPIDs(t *testing.T, path string, n int) []procid.Identity {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		var ids []procid.Identity
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			if id, err := procid.Capture(pid); err == nil {
				ids = append(ids, id)
			}
		}
		if len(ids) >= n {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s lists %d live pids, want %d (content %q)", path, len(ids), n, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// tokenHolders scans the whole host for live (non-zombie) processes whose
// environment carries token: an independent count of survivors.
func tokenHolders(t *testing.T, token string) []int {
	t.Helper()
	want := []byte(TokenEnv + "=" + token)
	names, err := readNames("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		st, err := procid.Stat(pid)
		if err != nil || st.State == 'Z' || st.State == 'X' {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, pid)
			}
		}
	}
	return out
}

// requireGone fails for every identity that still names a process, even a
// zombie: survivors and unreaped escapees are both failures.
func requireGone(t *testing.T, ids []procid.Identity) {
	t.Helper()
	for _, id := range ids {
		tok, err := procid.BirthToken(id.PID())
		if err == nil && tok == id.Token() {
			st, _ := procid.Stat(id.PID())
			t.Errorf("pid %d survived (state %c)", id.PID(), st.State)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
