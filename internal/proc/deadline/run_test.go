package deadline

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/proc/procid"
)

// buffer is a Writer safe for the two relay goroutines.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// brokenPipe fails every write like a closed pipe would.
type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, syscall.EPIPE }

func env() []string { return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"} }

type result struct {
	code      int
	err       error
	out, err_ string
	took      time.Duration
}

func run(t *testing.T, cfg Config, script string) result {
	t.Helper()
	var out, errb buffer
	start := time.Now()
	err := Run(cfg, Command{Args: []string{"sh", "-c", script}, Dir: t.TempDir(), Env: env()}, Stdio{Stdout: &out, Stderr: &errb})
	return result{code: exitcode.Code(err), err: err, out: out.String(), err_: errb.String(), took: time.Since(start)}
}

// event parses the single deadline line from stderr.
func eventIn(t *testing.T, stderr string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "loki_provider_deadline") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("deadline line %q: %v", line, err)
			}
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one deadline line in %q", stderr)
	}
	return found[0]
}

func TestHardTimeout(t *testing.T) {
	cfg := Config{Hard: 1, Grace: 0.5}
	r := run(t, cfg, `echo before; echo err-before >&2; sleep 60`)
	if r.code != 124 {
		t.Fatalf("exit %d (%v), want 124", r.code, r.err)
	}
	// Fires after the hard deadline, and well before the command's own end
	// (generous: the machine is loaded).
	if r.took < time.Second || r.took > 15*time.Second {
		t.Fatalf("took %v for a 1 s deadline", r.took)
	}
	if r.out != "before\n" || !strings.HasPrefix(r.err_, "err-before\n") {
		t.Fatalf("output before the timeout lost: stdout %q stderr %q", r.out, r.err_)
	}
	ev := eventIn(t, r.err_)
	if ev["reason"] != "hard_timeout" || ev["hard_seconds"] != 1.0 || ev["idle_seconds"] != 0.0 {
		t.Fatalf("event %v", ev)
	}
}

func TestIdleTimeout(t *testing.T) {
	cfg := Config{Hard: 30, Idle: 1, Grace: 0.5}
	// Output for ~1.5 s (every 0.2 s: never idle), then silence.
	r := run(t, cfg, `i=0; while [ $i -lt 8 ]; do echo tick $i; i=$((i+1)); sleep 0.2; done; sleep 60`)
	if r.code != 124 {
		t.Fatalf("exit %d (%v), want 124", r.code, r.err)
	}
	if got := strings.Count(r.out, "tick"); got != 8 {
		t.Fatalf("stdout %q: want all 8 ticks delivered (output resets the idle clock)", r.out)
	}
	if r.took < 2*time.Second || r.took > 20*time.Second {
		t.Fatalf("took %v", r.took)
	}
	if ev := eventIn(t, r.err_); ev["reason"] != "idle_timeout" || ev["idle_seconds"] != 1.0 {
		t.Fatalf("event %v", ev)
	}
}

func TestExitStatusPassesThrough(t *testing.T) {
	cases := []struct {
		name   string
		script string
		code   int
	}{
		{"success", "echo ok", 0},
		{"exit code", "exit 7", 7},
		{"killed by SIGKILL", "kill -KILL $$", 128 + 9},
		{"killed by SIGTERM", "kill -TERM $$", 128 + 15},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, Config{Hard: 30, Grace: 1}, c.script)
			if r.code != c.code {
				t.Fatalf("exit %d (%v), want %d", r.code, r.err, c.code)
			}
			if strings.Contains(r.err_, "loki_provider_deadline") {
				t.Fatalf("deadline reported without expiry: %q", r.err_)
			}
		})
	}
}

// A command that exits but leaves a process behind makes the run fail with
// 125, and the leftover is gone.
func TestLeftoverDescendants(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	r := run(t, Config{Hard: 30, Grace: 1}, `sleep 300 & echo $! > `+pidfile+`; exit 0`)
	if r.code != 125 || !errors.Is(r.err, ErrLeftovers) {
		t.Fatalf("exit %d (%v), want 125 leftovers", r.code, r.err)
	}
	b, _ := os.ReadFile(pidfile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q", b)
	}
	if st, err := procid.Stat(pid); err == nil && st.State != 'Z' {
		if c, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); strings.TrimSpace(string(c)) == "sleep" {
			t.Fatalf("leftover %d still alive", pid)
		}
	}
}

func TestBrokenOutputPipe(t *testing.T) {
	start := time.Now()
	err := Run(Config{Hard: 30, Grace: 0.5}, Command{Args: []string{"sh", "-c", "while :; do echo spam; done"}, Env: env()},
		Stdio{Stdout: brokenPipe{}, Stderr: &buffer{}})
	if code := exitcode.Code(err); code != 141 {
		t.Fatalf("exit %d (%v), want 141", code, err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("took %v to notice a broken pipe", took)
	}
}

func TestLaunchFailures(t *testing.T) {
	var out buffer
	err := Run(Config{Hard: 5}, Command{Args: []string{"loki-no-such-cmd-xyz"}, Env: env()}, Stdio{Stdout: &out, Stderr: &out})
	if code := exitcode.Code(err); code != 127 {
		t.Fatalf("exit %d (%v), want 127", code, err)
	}
	err = Run(Config{Hard: 5, Idle: 9}, Command{Args: []string{"true"}, Env: env()}, Stdio{Stdout: &out, Stderr: &out})
	if code := exitcode.Code(err); code != 2 || !errors.Is(err, ErrUsage) {
		t.Fatalf("exit %d (%v), want a usage error", code, err)
	}
}

// The control file exists while the command runs and not after; the
// runner does not inherit the variable.
func TestControlFileDuringRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control")
	cfg := Config{Hard: 30, Grace: 1, ControlFile: path}
	var out buffer
	script := `cat ` + path + `; echo "var=${` + ControlEnv + `:-unset}"`
	err := Run(cfg, Command{Args: []string{"sh", "-c", script}, Env: append(env(), ControlEnv+"="+path)}, Stdio{Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatalf("Run: %v (output %q)", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || lines[1] != "var=unset" {
		t.Fatalf("stdout %q", out.String())
	}
	if id, err := parseControl([]byte(lines[0] + "\n")); err != nil || id.PID() != os.Getpid() {
		t.Fatalf("control file seen by the command: %q (%v)", lines[0], err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("control file left after exit: %v", err)
	}
}
