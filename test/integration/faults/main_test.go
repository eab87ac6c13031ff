//go:build linux

package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/execution/state"
	"github.com/loki-sh/loki/internal/testutil"
)

// wait bounds every wait: generous, the machine may be heavily loaded.
const wait = 90 * time.Second

// privateEnv marks the re-run of the test binary inside its own mount
// namespace; helperEnv selects a helper role (see helper_test.go).
const (
	privateEnv = "LOKI_FAULTS_PRIVATE_MNTNS"
	helperEnv  = "LOKI_FAULTS_HELPER"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(runHelper(role))
	}
	if os.Getenv(privateEnv) == "" && os.Geteuid() == 0 {
		os.Exit(rerunPrivate())
	}
	os.Exit(m.Run())
}

// rerunPrivate runs this test binary again with the same arguments in a new
// mount namespace (Go makes "/" recursively private there), forwarding the
// signals go test may send, and returns its exit code.
func rerunPrivate() int {
	cmd := exec.Command("/proc/self/exe", os.Args[1:]...)
	cmd.Env = append(os.Environ(), privateEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		os.Stderr.WriteString("faults: cannot enter a private mount namespace: " + err.Error() + "\n")
		return 1
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		return 1
	}
	return 0
}

// requireMountNS fails (or skips off CI) unless the test runs in the
// private mount namespace TestMain made, where mounting is harmless.
func requireMountNS(t *testing.T) {
	t.Helper()
	testutil.RequireRoot(t)
	if os.Getenv(privateEnv) == "" {
		t.Fatal("not in the private mount namespace TestMain should have made")
	}
}

// outcome is a finished command.
type outcome struct {
	code           int
	stdout, stderr string
}

// cli runs the built loki-supervise with env to completion, bounded.
func cli(t *testing.T, env []string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t, "loki-supervise"), args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("loki-supervise %v did not finish within %v; stderr %q", args, wait, e.String())
	}
	return outcome{code: exitOf(t, err), stdout: o.String(), stderr: e.String()}
}

func exitOf(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	t.Fatalf("run: %v", err)
	return -1
}

// baseEnv is the test's environment without LOKI_* knobs, plus a fast poll.
func baseEnv(data string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOKI_") {
			env = append(env, kv)
		}
	}
	return append(env, "LOKI_DATA_DIR="+data, "LOKI_BUILD_SUPERVISOR_POLL_SECONDS=0.05",
		"LOKI_BUILD_DESCENDANT_GRACE_SECONDS=0.5")
}

// requireNoCrash fails if stderr carries a Go panic or goroutine dump, or
// a secret value.
func requireNoCrash(t *testing.T, stderr string, secrets ...string) {
	t.Helper()
	for _, bad := range []string{"goroutine ", "panic:", "runtime error", "SIGSEGV"} {
		if strings.Contains(stderr, bad) {
			t.Fatalf("stderr has %q (a crash):\n%s", bad, stderr)
		}
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(stderr, s) {
			t.Fatalf("stderr echoes a secret value:\n%s", stderr)
		}
	}
}

// requireOneLine fails unless stderr is exactly one loki-supervise line
// that contains want.
func requireOneLine(t *testing.T, stderr, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	var own []string
	for _, l := range lines {
		if strings.HasPrefix(l, "loki-supervise: execution ") {
			continue // the minted id, printed before anything can fail
		}
		own = append(own, l)
	}
	if len(own) != 1 || !strings.HasPrefix(own[0], "loki-supervise: ") || !strings.Contains(own[0], want) {
		t.Fatalf("stderr %q: want one loki-supervise line naming %q", stderr, want)
	}
}

// requireNotTorn walks a data dir: every state.json parses as a JSON
// object and no temp file of an atomic write is left behind.
func requireNotTorn(t *testing.T, data string) {
	t.Helper()
	filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		if strings.HasSuffix(p, ".tmp") {
			t.Errorf("temp file left behind: %s", p)
		}
		if fi.Name() == state.StateFile {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("read %s: %v", p, err)
			} else if _, err := state.Decode(b); err != nil {
				t.Errorf("%s is torn: %v\n%s", p, err, b)
			}
		}
		return nil
	})
}

// mountTmpfs mounts a tmpfs of size bytes on a fresh directory.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+itoa(size)+",mode=0700"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// bindReadOnly makes path read-only by bind-mounting it onto itself.
func bindReadOnly(t *testing.T, path string) {
	t.Helper()
	if err := unix.Mount(path, path, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind %s: %v", path, err)
	}
	t.Cleanup(func() { unix.Unmount(path, unix.MNT_DETACH) })
	if err := unix.Mount("", path, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount %s read-only: %v", path, err)
	}
}

// fill writes zeros into dir/fill until the filesystem is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "fill")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !strings.Contains(err.Error(), "no space") {
				t.Fatalf("fill: %v", err)
			}
			return p
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// record reads one record straight from a data dir.
func record(t *testing.T, data, id string) state.State {
	t.Helper()
	st, err := state.NewStore(filepath.Join(data, "dashboard", "builds")).Read(state.MustParseID(id))
	if err != nil {
		t.Fatalf("read record %s: %v", id, err)
	}
	return st
}

// waitRecord polls a record until cond holds (the record is a file another
// process writes: there is no event to wait on).
func waitRecord(t *testing.T, data, id, what string, cond func(state.State) bool) state.State {
	t.Helper()
	store := state.NewStore(filepath.Join(data, "dashboard", "builds"))
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if st, err := store.Read(state.MustParseID(id)); err == nil && cond(st) {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	st, _ := store.Read(state.MustParseID(id))
	t.Fatalf("timed out waiting for %s; record: %v", what, st)
	return nil
}
