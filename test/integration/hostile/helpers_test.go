//go:build linux

package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

// wait bounds every wait: generous, the machine may be loaded.
const wait = 60 * time.Second

// box is a host boundary in a temp dir: a workspace under the workspace
// roots, a runtime write path, a host file no variable names, and a data
// dir for the records outside all of them.
type box struct {
	t                             *testing.T
	root, ws, out, hostFile, data string
	extra                         []string
	files                         []*os.File // the supervisor's fds 3, 4, ...
}

func newBox(t *testing.T) *box {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o755) // the runner may run as another uid
	b := &box{
		t:        t,
		root:     root,
		ws:       filepath.Join(root, "protected", "ws", "project"),
		out:      filepath.Join(root, "out"),
		hostFile: filepath.Join(root, "host.txt"),
		data:     filepath.Join(root, "data"),
	}
	for _, d := range []string{b.ws, b.out, b.data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(b.hostFile, []byte("host\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func requireLandlock(t *testing.T) {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireLandlock(t, 6)
}

// env is the supervisor's environment: confined unless confined is false.
func (b *box) env(confined bool) []string {
	e := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + b.root,
		"LOKI_DATA_DIR=" + b.data,
		"LOKI_HOST_PROTECTED_ROOT=" + filepath.Join(b.root, "protected"),
		"LOKI_WORKSPACE_ROOTS=" + filepath.Join(b.root, "protected", "ws"),
		"LOKI_HOST_RUNTIME_READ_PATHS=" + b.out,
		"LOKI_HOST_RUNTIME_WRITE_PATHS=" + b.out,
		"LOKI_HOST_CHILD_PATH=/usr/bin:/bin:/usr/sbin:/sbin",
		"LOKI_HOST_RESERVED_PORTS=8080",
		"LOKI_BUILD_SUPERVISOR_POLL_SECONDS=0.05",
		"LOKI_BUILD_DESCENDANT_GRACE_SECONDS=0.2",
	}
	if confined {
		e = append(e, "LOKI_HOST_LANDLOCK=1")
	}
	return append(e, b.extra...)
}

func newID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/uuid")
	return strings.TrimSpace(string(b))
}

// run is one `loki-supervise run` in progress.
type run struct {
	b      *box
	id     string
	cmd    *exec.Cmd
	stderr bytes.Buffer
	w      *testutil.Waiter
}

// start runs script (sh) as a run's runner in the workspace.
func (b *box) start(confined bool, script string, flags ...string) *run {
	b.t.Helper()
	r := &run{b: b, id: newID()}
	args := append([]string{"run", "--execution-id", r.id, "--workspace", b.ws}, flags...)
	args = append(args, "--", "/bin/sh", "-c", script)
	r.cmd = exec.Command(testutil.Binary(b.t, "loki-supervise"), args...)
	r.cmd.Env = b.env(confined)
	r.cmd.Dir = b.ws
	r.cmd.Stderr = &r.stderr
	r.cmd.ExtraFiles = b.files
	if err := r.cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	r.w = testutil.Wait(r.cmd)
	b.t.Cleanup(r.w.Kill)
	return r
}

// exit waits at most limit for the supervisor to end.
func (r *run) exit(limit time.Duration) (int, bool) {
	select {
	case <-r.w.Done():
		return testutil.ExitCode(r.w.Err()), true
	case <-time.After(limit):
		return -1, false
	}
}

func (r *run) dir() string { return filepath.Join(r.b.data, "dashboard", "builds", r.id) }

func (r *run) record() map[string]any {
	var m map[string]any
	b, err := os.ReadFile(filepath.Join(r.dir(), "state.json"))
	if err == nil {
		json.Unmarshal(b, &m)
	}
	return m
}

func (r *run) log() string {
	b, _ := os.ReadFile(filepath.Join(r.dir(), "runner.log"))
	return string(b)
}

// waitLog waits until runner.log contains s.
func (r *run) waitLog(s string) {
	r.b.t.Helper()
	ended := func() bool {
		select {
		case <-r.w.Done():
			return true
		default:
			return false
		}
	}
	if !testutil.WaitUntil(wait, func() bool { return strings.Contains(r.log(), s) || ended() }) || !strings.Contains(r.log(), s) {
		r.b.t.Fatalf("runner never logged %q; log %q; stderr %q", s, r.log(), r.stderr.String())
	}
}

// cli runs a short loki-supervise command with the box's environment.
func (b *box) cli(args ...string) (string, string, int) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(b.t, "loki-supervise"), args...)
	cmd.Env = b.env(false)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return o.String(), e.String(), testutil.ExitCode(err)
}
