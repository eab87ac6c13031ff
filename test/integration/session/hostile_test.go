//go:build linux

package session

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Hostile-peer scenarios: what the supervisor serves the session (the
// egress proxy) must stay bounded whatever the peer sends. The peer is
// test/hostile, built static once.

var (
	hostileOnce sync.Once
	hostilePath string
	hostileErr  error
)

// hostile returns the path of the built test/hostile: under /tmp, so
// that the namespace backend's private /tmp shows it (it is the peer's
// argv[0]) and every user may run it.
func hostile(t *testing.T) string {
	t.Helper()
	hostileOnce.Do(func() {
		dir, err := os.MkdirTemp("", "loki-hostile-")
		if err != nil {
			hostileErr = err
			return
		}
		os.Chmod(dir, 0o755)
		hostilePath = filepath.Join(dir, "hostile")
		cmd := exec.Command("go", "build", "-o", hostilePath, "../../hostile")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			hostileErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if hostileErr != nil {
		t.Fatalf("build test/hostile: %v", hostileErr)
	}
	return hostilePath
}

// The bounds the hostile egress peer must not push the supervisor past
// (before them: 1.4 GiB peak, 1,509 descriptors, 300 stderr lines).
const (
	hostileMaxRSSKiB = 32 << 10
	hostileMaxFDs    = 256 + 64 // the proxy's connection bound, plus the session's own
	hostileMaxLines  = 10 + 2   // the first refusals, then one summary of each kind
)

// scenarioHostileEgress: a peer attacks the egress proxy with three
// unterminated 128 MiB headers at once, 1,500 idle connections and 300
// refused names. The supervisor's peak RSS stays under 32 MiB, its
// descriptors under the connection bound, the user's stderr gets a few
// lines; the headers are answered 431, the connections past the bound
// 503. A backend without the proxy refuses --allow-host (127, one line).
func scenarioHostileEgress(t *testing.T, b backend) {
	flags := []string{"--allow-host", "example.com"}
	if b.name != "namespace" {
		r := run(t, supervise(t, b, flags, "/bin/true"), "", generous)
		if r.code != 127 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "--allow-host") {
			t.Fatalf("exit %d, stderr %q: want 127 and one line refusing --allow-host", r.code, r.stderr)
		}
		return
	}
	cmd := supervise(t, b, flags, hostile(t), "egress")
	cmd.Dir = "/"
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := newLineReader(stdout)
	got := map[string]string{}
	var heldFDs int
	var peakKiB int
	for {
		k, v, _ := strings.Cut(lines.next(t, 120*time.Second), "=")
		if k != "hold" {
			got[k] = v
			continue
		}
		if v == "idle" {
			heldFDs = countFDs(t, cmd.Process.Pid)
		} else {
			peakKiB = statusKiB(t, cmd.Process.Pid, "VmHWM")
		}
		fmt.Fprintln(stdin)
		if v == "done" {
			break
		}
	}
	stdin.Close()
	if code := waitBounded(t, cmd, generous); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	t.Logf("supervisor: peak RSS %d KiB, %d fds with the idle connections held; peer saw %v; %d stderr lines",
		peakKiB, heldFDs, got, strings.Count(stderr.String(), "\n"))
	if peakKiB > hostileMaxRSSKiB {
		t.Errorf("the supervisor's peak RSS is %d KiB, want at most %d", peakKiB, hostileMaxRSSKiB)
	}
	if heldFDs > hostileMaxFDs {
		t.Errorf("the supervisor held %d descriptors, want at most %d", heldFDs, hostileMaxFDs)
	}
	if n := strings.Count(stderr.String(), "\n"); n > hostileMaxLines {
		t.Errorf("%d lines on stderr, want at most %d:\n%s", n, hostileMaxLines, stderr.String())
	}
	want := map[string]string{"headers": "431,431,431", "idle_open": "1500", "refused": "403:300"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if !strings.Contains(got["idle_answered"], "503:") {
		t.Errorf("idle connections answered %q: want those past the bound answered 503", got["idle_answered"])
	}
}

func countFDs(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// statusKiB reads a kB field of /proc/PID/status.
func statusKiB(t *testing.T, pid int, key string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == key+":" {
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", key, pid)
	return 0
}
