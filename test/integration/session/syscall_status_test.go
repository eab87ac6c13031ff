//go:build linux

package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

// refusalCalls is how often the peer calls a denied syscall: enough
// that a table growing with the calls would show in the supervisor's
// peak RSS (hostileMaxRSSKiB).
const refusalCalls = 1000000

// TestStatusSyscallRefusals: the namespace backend with a status stream
// answers the syscall policy's denials from the supervisor (a seccomp
// listener) and reports them: a peer that calls keyctl a million times,
// openat2 and setxattr once gets the errnos the filter gives without a
// stream, and the stream has one refused event per syscall at once
// (count 1, with the peer's pid as the host sees it and its command
// name) and the totals before end; the supervisor's memory does not
// grow with the calls. Killed with -9, the supervisor's listener is
// gone: the peer's denied call is still refused (ENOSYS), and the lease
// ends the session.
func TestStatusSyscallRefusals(t *testing.T) {
	b := get("namespace")
	want := map[string]string{"keyctl": "EPERM:" + strconv.Itoa(refusalCalls), "openat2": "ENOSYS", "setxattr": "ENOTSUP"}
	// The peer's answers without a stream: the filter's own.
	got, _ := holdSession(t, supervise(t, b, []string{"--eof", "wait"}, hostile(t), "deny", strconv.Itoa(refusalCalls)), func(string, map[string]string) {})
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("without a stream %s=%q, want %q", k, got[k], v)
		}
	}
	// The supervisor's peak with a thousand refusals: the million's
	// must not be more than 1 MiB above it.
	basePath := filepath.Join(t.TempDir(), "status.jsonl")
	base := supervise(t, b, []string{"--status-file", basePath, "--eof", "wait"}, hostile(t), "deny", "1000")
	var baseKiB int
	holdSession(t, base, func(string, map[string]string) { baseKiB = statusKiB(t, base.Process.Pid, "VmHWM") })
	t.Run("refused events", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "status.jsonl")
		cmd := supervise(t, b, []string{"--status-file", path, "--eof", "wait"}, hostile(t), "deny", strconv.Itoa(refusalCalls))
		var peakKiB int
		var first map[string]any
		started := time.Now()
		got, stderr := holdSession(t, cmd, func(_ string, got map[string]string) {
			peakKiB = statusKiB(t, cmd.Process.Pid, "VmHWM")
			// The peer is alive, holding: its host pid names it.
			for _, l := range streamOf(t, path) {
				if l["event"] == "refused" && l["syscall"] == "keyctl" {
					first = l
					break
				}
			}
			if first == nil {
				t.Fatalf("no refused keyctl while the peer holds")
			}
			pid := int(first["pid"].(float64))
			nspid, comm := procNS(t, pid)
			if nspid != got["pid"] || comm != first["comm"] || comm != "hostile" {
				t.Fatalf("refused by pid %d (%v): it is pid %s (%s) in the session, the peer is %s", pid, first["comm"], nspid, comm, got["pid"])
			}
			// Whoever holds the listener answers for the filter: the
			// supervisor alone.
			initPID := int(streamOf(t, path)[0]["init_pid"].(float64))
			for _, p := range []int{initPID, pid} {
				if holdsListener(p) {
					t.Fatalf("pid %d of the session holds the seccomp listener", p)
				}
			}
			if !holdsListener(cmd.Process.Pid) {
				t.Fatalf("the supervisor holds no seccomp listener")
			}
		})
		t.Logf("%d refused calls: %v, supervisor peak RSS %d KiB (%d KiB after 1,000)", refusalCalls, time.Since(started).Round(time.Millisecond), peakKiB, baseKiB)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("with a stream %s=%q, want %q as without", k, got[k], v)
			}
		}
		lines := streamOf(t, path)
		end := endOf(t, lines)
		counts := map[string][]float64{}
		for _, l := range lines {
			if l["event"] == "refused" {
				if l["what"] != "syscall" {
					t.Fatalf("refused %v", l)
				}
				counts[l["syscall"].(string)] = append(counts[l["syscall"].(string)], l["count"].(float64))
			}
		}
		wantCounts := map[string][]float64{"keyctl": {1, refusalCalls}, "openat2": {1}, "setxattr": {1}}
		if fmt.Sprint(counts) != fmt.Sprint(wantCounts) || first["count"].(float64) != 1 {
			t.Errorf("refused counts %v, want %v", counts, wantCounts)
		}
		if r := end["refusals"].(map[string]any); r["syscall"].(float64) != refusalCalls+2 || end["reason"] != "peer-exit" {
			t.Errorf("end %v", end)
		}
		observes := fmt.Sprint(lines[0]["observes"])
		if !strings.Contains(observes, "syscall") {
			t.Errorf("start observes %s", observes)
		}
		if peakKiB > hostileMaxRSSKiB || peakKiB > baseKiB+1<<10 {
			t.Errorf("the supervisor's peak RSS is %d KiB (%d KiB after 1,000 calls), want at most %d and 1 MiB more", peakKiB, baseKiB, hostileMaxRSSKiB)
		}
		if !strings.Contains(stderr, fmt.Sprintf("refused: %d syscalls: keyctl (%d), openat2, setxattr", refusalCalls+2, refusalCalls)) {
			t.Errorf("no summary line: %q", stderr)
		}
	})
	t.Run("supervisor kill -9", func(t *testing.T) {
		const leaseDur = 2 * time.Second
		path := filepath.Join(t.TempDir(), "status.jsonl")
		root := privateDir(t, t.TempDir(), "ctl", 0)
		cmd := supervise(t, b, []string{"--status-file", path, "--lease-duration", leaseDur.String(), "--renew-interval", "200ms",
			"--eof", "wait", "--control-root", root, "--no-parent-death-signal"}, hostile(t), "deny-watch")
		lines, _ := startHeld(t, cmd)
		if l := lines.next(t, generous); l != "keyctl=EPERM" {
			t.Fatalf("first answer %q, want EPERM", l)
		}
		var pid int
		if !testutil.WaitUntil(10*time.Second, func() bool {
			for _, l := range streamOf(t, path) {
				if l["event"] == "refused" {
					pid = int(l["pid"].(float64))
				}
			}
			return pid > 0
		}) {
			t.Fatal("no refused event")
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Process.Wait()
		killedAt := time.Now()
		if l := lines.next(t, 5*time.Second); l != "keyctl=ENOSYS" {
			t.Fatalf("after kill -9 the peer saw %q, want ENOSYS: still refused", l)
		}
		bound := leaseDur + 4*time.Second
		if !testutil.WaitUntil(bound, func() bool { _, err := os.Stat("/proc/" + strconv.Itoa(pid)); return err != nil }) {
			t.Fatalf("peer %d alive %v after kill -9", pid, bound)
		}
		t.Logf("session gone %v after kill -9 (lease %v)", time.Since(killedAt).Round(time.Millisecond), leaseDur)
	})
}

// procNS reads a host pid's innermost pid (NSpid's last) and command name.
func procNS(t *testing.T, pid int) (string, string) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var nspid, name string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && f[0] == "NSpid:":
			nspid = f[len(f)-1]
		case len(f) >= 2 && f[0] == "Name:":
			name = f[1]
		}
	}
	return nspid, name
}

// holdsListener: one of pid's descriptors is a seccomp listener.
func holdsListener(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, _ := os.ReadDir(dir)
	for _, fd := range fds {
		if l, _ := os.Readlink(filepath.Join(dir, fd.Name())); l == "anon_inode:seccomp notify" {
			return true
		}
	}
	return false
}
