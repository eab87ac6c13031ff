package deadline

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/testutil"
)

// started is a running `loki-supervise deadline` and what it reported.
type started struct {
	cmd *exec.Cmd
	w   *testutil.Waiter
}

func startDeadline(t *testing.T, env []string, args ...string) *started {
	t.Helper()
	bin := testutil.Binary(t, "loki-supervise")
	cmd := exec.Command(bin, append([]string{"deadline"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &started{cmd: cmd, w: testutil.Wait(cmd)}
	t.Cleanup(func() {
		select {
		case <-s.w.Done():
		default: // a failed test: stop it (its lineage goes with it)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			s.w.Within(20 * time.Second)
		}
	})
	return s
}

func (s *started) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-s.w.Done():
	case <-time.After(within):
		t.Fatalf("deadline process still running after %v", within)
	}
	return s.cmd.ProcessState.ExitCode()
}

// waitFor polls (bounded) until path exists with content, and returns it.
func waitFor(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func captureFromFile(t *testing.T, path string) procid.Identity {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(waitFor(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	id, err := procid.Capture(pid)
	if err != nil {
		t.Fatalf("escapee %d: %v", pid, err)
	}
	return id
}

// requireGone waits a little (the kernel delivers SIGKILL asynchronously)
// and fails if id still names a live process.
func requireGone(t *testing.T, id procid.Identity) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for id.Matches() {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d survived", id.PID())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SIGTERM, SIGINT and SIGHUP to the deadline process stop the whole lineage
// and exit 128+N.
func TestSignalsStopTheLineage(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			s := startDeadline(t, nil, "--hard", "120", "--grace", "1", "--",
				"sh", "-c", `setsid sh -c 'trap "" TERM; sleep 300' & echo $! > `+pidfile+`; sleep 300`)
			escapee := captureFromFile(t, pidfile)
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := s.wait(t, 30*time.Second); code != 128+int(sig) {
				t.Fatalf("exit %d, want %d", code, 128+int(sig))
			}
			requireGone(t, escapee)
		})
	}
}

func TestCancelThroughTheControlFile(t *testing.T) {
	dir := t.TempDir()
	control := filepath.Join(dir, "control")
	pidfile := filepath.Join(dir, "pid")
	s := startDeadline(t, []string{"LOKI_DEADLINE_CONTROL_FILE=" + control},
		"--hard", "120", "--grace", "1", "--", "sh", "-c", `sleep 300 & echo $! > `+pidfile+`; wait`)
	child := captureFromFile(t, pidfile)
	waitFor(t, control)
	bin := testutil.Binary(t, "loki-supervise")

	// A tampered file is refused and nothing is signalled.
	if err := os.Chmod(control, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "deadline", "cancel", control).CombinedOutput()
	if code := testutil.ExitCode(err); code != 1 || !strings.Contains(string(out), "mode 0644") {
		t.Fatalf("cancel of a 0644 file: exit %d, %q", code, out)
	}
	select {
	case <-s.w.Done():
		t.Fatal("a refused cancel stopped the deadline process")
	default:
	}
	if err := os.Chmod(control, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(bin, "deadline", "cancel", control).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "sent SIGTERM") {
		t.Fatalf("cancel: %v, %q", err, out)
	}
	if code := s.wait(t, 30*time.Second); code != 143 {
		t.Fatalf("exit %d after cancel, want 143", code)
	}
	requireGone(t, child)
	if _, err := os.Lstat(control); !os.IsNotExist(err) {
		t.Fatalf("control file still there: %v", err)
	}
	// The file is gone, and a stale one for the dead process is refused.
	out, err = exec.Command(bin, "deadline", "cancel", control).CombinedOutput()
	if testutil.ExitCode(err) != 1 {
		t.Fatalf("cancel of a missing file: %v %q", err, out)
	}
}

// A reader that goes away makes the deadline process stop the lineage and
// exit 141, promptly.
func TestBrokenPipe(t *testing.T) {
	bin := testutil.Binary(t, "loki-supervise")
	cmd := exec.Command(bin, "deadline", "--hard", "60", "--grace", "1", "--", "sh", "-c", "while :; do echo spam; done")
	r, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	r.Close()
	code, ok := testutil.Wait(cmd).Within(30 * time.Second)
	if !ok {
		t.Fatal("deadline process did not notice the broken pipe")
	}
	if code != 141 {
		t.Fatalf("exit %d, want 141", code)
	}
}

func TestLaunchAndUsageErrors(t *testing.T) {
	bin := testutil.Binary(t, "loki-supervise")
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"not found", []string{"--hard", "5", "--grace", "1", "--", "loki-no-such-command"}, 127, "not found"},
		{"idle not below hard", []string{"--hard", "5", "--grace", "1", "--idle", "5", "--", "true"}, 2, "less than --hard"},
		{"missing grace", []string{"--hard", "5", "--", "true"}, 2, "required"},
		{"bad number", []string{"--hard", "soon", "--grace", "1", "--", "true"}, 2, "number of seconds"},
		{"no command", []string{"--hard", "5", "--grace", "1"}, 2, "no command"},
		{"cancel needs a file", []string{"cancel"}, 2, "CONTROL_FILE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := exec.Command(bin, append([]string{"deadline"}, c.args...)...).CombinedOutput()
			if code := testutil.ExitCode(err); code != c.code || !strings.Contains(string(out), c.msg) {
				t.Fatalf("exit %d %q; want %d containing %q", code, out, c.code, c.msg)
			}
			if n := strings.Count(strings.TrimSpace(string(out)), "\n"); n != 0 {
				t.Fatalf("error is not one line: %q", out)
			}
		})
	}
}
