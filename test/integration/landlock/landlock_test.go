//go:build linux

package landlock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/execution/sandbox/boundary/boundarytest"
	"github.com/loki-sh/loki/internal/testutil"
)

// layout is the shared valid boundary (boundarytest), its secret and
// data dir, and a host file that no boundary variable names.
type layout struct {
	*boundarytest.Layout
	hostFile string
}

func newLayout(t *testing.T) *layout {
	t.Helper()
	l := &layout{Layout: boundarytest.New(t, "")}
	l.hostFile = filepath.Join(l.Root, "host.txt")
	boundarytest.WriteFile(t, l.hostFile, "host\n", 0o600)
	delete(l.Env, "HOME") // the supervisor's own HOME is left unset
	return l
}

func (l *layout) env(extra ...string) []string {
	return append(append([]string{
		"PATH=" + os.Getenv("PATH"),
		"LOKI_DATA_DIR=" + l.Data,
		"LOKI_BUILD_DESCENDANT_GRACE_SECONDS=0.05",
	}, l.Environ()...), extra...)
}

// probeScript checks, from inside the runner, each thing the ruleset must
// allow or refuse, one "name=ok" or "name=denied:<error>" line each.
func (l *layout) probeScript(recordDir string) string {
	return `#!/bin/sh
try() { name=$1; shift; if out=$("$@" 2>&1); then echo "$name=ok"; else echo "$name=denied:$out" | tr '\n' ' '; echo; fi; }
try ws-write sh -c 'echo made > made-in-ws && cat made-in-ws'
try ws-read cat ` + l.Spec + `
try tmp-write sh -c 'echo t > "$TMPDIR/t" && cat "$TMPDIR/t"'
try sys-read ls /usr/bin
try etc-read cat /etc/passwd
try sh /bin/sh -c 'exit 0'
try out-write sh -c 'echo o > ` + l.Out + `/o'
try host-write sh -c 'echo pwned >> ` + l.hostFile + `'
try host-create sh -c 'echo x > ` + l.Root + `/new'
try record-write sh -c 'echo x >> ` + recordDir + `/state.json'
try secret-list ls ` + l.Secret + `
try secret-read cat ` + l.Secret + `/key
`
}

var allowed = []string{"ws-write", "ws-read", "tmp-write", "sys-read", "etc-read", "sh", "out-write"}
var refused = []string{"host-write", "host-create", "record-write", "secret-list", "secret-read"}

func requireLandlock(t *testing.T) {
	t.Helper()
	testutil.RequireLandlock(t, 6)
}

type result struct {
	code   int
	stderr string
	record map[string]any
	log    string
	dir    string
}

// supervise runs loki-supervise with argv and env, through launcher when
// it is not empty, and reads the execution's record.
func supervise(t *testing.T, l *layout, id string, env []string, launcher []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append(append(launcher, testutil.Binary(t, "loki-supervise")), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = l.Workspace
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	r := result{code: cmd.ProcessState.ExitCode(), stderr: stderr.String(), dir: filepath.Join(l.Data, "dashboard", "builds", id)}
	b, err := os.ReadFile(filepath.Join(r.dir, "state.json"))
	if err != nil {
		t.Fatalf("no record (exit %d, stderr %q): %v", r.code, r.stderr, err)
	}
	if err := json.Unmarshal(b, &r.record); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(filepath.Join(r.dir, "runner.log"))
	r.log = string(log)
	return r
}

func newID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/uuid")
	return strings.TrimSpace(string(b))
}

func buildArgs(l *layout, id string) []string {
	return []string{"build", "--execution-id", id, "--run-sh", l.RunSh, "--workspace", l.Workspace,
		"--loki-dir", filepath.Join(l.Workspace, ".loki"), "--spec", l.Spec, "--provider", "test"}
}

// checkConfined asserts every probe line, the host's files, and the
// confinement record.
func checkConfined(t *testing.T, l *layout, r result) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q, log:\n%s", r.code, r.stderr, r.log)
	}
	lines := map[string]string{}
	for _, line := range strings.Split(r.log, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			lines[k] = v
		}
	}
	for _, name := range allowed {
		if lines[name] != "ok" {
			t.Errorf("%s: %q, want ok", name, lines[name])
		}
	}
	for _, name := range refused {
		if !strings.HasPrefix(lines[name], "denied:") || !strings.Contains(lines[name], "Permission denied") {
			t.Errorf("%s: %q, want refused with EACCES (Permission denied)", name, lines[name])
		}
	}
	if b, _ := os.ReadFile(l.hostFile); string(b) != "host\n" {
		t.Errorf("host file now %q", b)
	}
	if _, err := os.Stat(filepath.Join(l.Root, "new")); err == nil {
		t.Errorf("the runner created a file outside its write paths")
	}
	if b, _ := os.ReadFile(filepath.Join(l.Out, "o")); string(b) != "o\n" {
		t.Errorf("runtime write path: %q", b)
	}
	c, _ := r.record["confinement"].(map[string]any)
	ruleset, err := os.ReadFile(filepath.Join(r.dir, "host-landlock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(ruleset)
	if c["kind"] != "linux-landlock" || c["ruleset_sha256"] != hex.EncodeToString(sum[:]) || c["landlock_abi"].(float64) < 6 {
		t.Errorf("confinement record %v (ruleset sha256 %x)", c, sum)
	}
}

// TestBuildConfined: a build's runner under LOKI_HOST_LANDLOCK=1, and
// `build --print-landlock` prints the ruleset that was applied, without
// making a record.
func TestBuildConfined(t *testing.T) {
	requireLandlock(t)
	l := newLayout(t)
	id := newID()
	if err := os.WriteFile(l.RunSh, []byte(l.probeScript(filepath.Join(l.Data, "dashboard", "builds", id))), 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(l.Workspace, ".loki"), 0o700)
	r := supervise(t, l, id, l.env("LOKI_HOST_LANDLOCK=1"), nil, buildArgs(l, id)...)
	checkConfined(t, l, r)
	applied, _ := os.ReadFile(filepath.Join(r.dir, "host-landlock.json"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, printID := range []string{id, newID()} {
		print := exec.CommandContext(ctx, testutil.Binary(t, "loki-supervise"), append(buildArgs(l, printID), "--print-landlock")...)
		print.Env = l.env()
		printed, err := print.Output()
		if err != nil {
			t.Fatalf("--print-landlock: %v", err)
		}
		if printID == id && !bytes.Equal(printed, applied) {
			t.Errorf("printed ruleset differs from the applied one\n--- printed\n%s\n--- applied\n%s", printed, applied)
		}
		if _, err := os.Stat(filepath.Join(l.Data, "dashboard", "builds", printID)); printID != id && err == nil {
			t.Errorf("--print-landlock made a record")
		}
	}
}

// TestRunConfined: the same boundary confines a generic `run`, which has
// no engine and no spec, and whose TMPDIR is in its own loki dir in its
// record, outside the workspace: writable, the record beside it not.
func TestRunConfined(t *testing.T) {
	requireLandlock(t)
	l := newLayout(t)
	id := newID()
	script := filepath.Join(l.RT, "probe.sh")
	if err := os.WriteFile(script, []byte(l.probeScript(filepath.Join(l.Data, "dashboard", "builds", id))), 0o755); err != nil {
		t.Fatal(err)
	}
	r := supervise(t, l, id, l.env("LOKI_HOST_LANDLOCK=1"), nil,
		"run", "--execution-id", id, "--workspace", l.Workspace, "--", "/bin/sh", script)
	checkConfined(t, l, r)
}

// TestRefusedWithoutLandlock: confinement asked for on a kernel without
// Landlock is a launch refusal (127, one line naming the fix, recorded
// launch_failed), and the runner never starts.
func TestRefusedWithoutLandlock(t *testing.T) {
	requireLandlock(t) // the seccomp launcher is what takes it away
	l := newLayout(t)
	id := newID()
	ran := filepath.Join(l.Root, "ran")
	os.WriteFile(l.RunSh, []byte("#!/bin/sh\ntouch "+ran+"\n"), 0o755)
	os.MkdirAll(filepath.Join(l.Workspace, ".loki"), 0o700)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := supervise(t, l, id, l.env("LOKI_HOST_LANDLOCK=1", noLandlockEnv+"=1"), []string{self}, buildArgs(l, id)...)
	if r.code != 127 {
		t.Fatalf("exit %d, want 127; stderr %q", r.code, r.stderr)
	}
	if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "needs Landlock ABI 6") ||
		!strings.Contains(r.stderr, "this kernel has none") || !strings.Contains(r.stderr, "LOKI_HOST_LANDLOCK") {
		t.Errorf("stderr %q, want one line naming the ABI needed and the fix", r.stderr)
	}
	if r.record["termination_reason"] != "launch_failed" || !strings.Contains(r.record["launch_error"].(string), "needs Landlock ABI 6") {
		t.Errorf("record: termination_reason %v, launch_error %v", r.record["termination_reason"], r.record["launch_error"])
	}
	if _, ok := r.record["confinement"]; ok {
		t.Errorf("a refused run recorded a confinement")
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the runner ran")
	}
	// Without the switch the same launcher runs the build: the refusal is
	// the switch's, not the launcher's.
	id2 := newID()
	r = supervise(t, l, id2, l.env(noLandlockEnv+"=1"), []string{self}, buildArgs(l, id2)...)
	if r.code != 0 {
		t.Fatalf("unconfined through the launcher: exit %d, stderr %q", r.code, r.stderr)
	}
}
