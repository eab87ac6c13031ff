//go:build linux

package containerd

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/lease"
	"github.com/loki-sh/loki/internal/testutil"
)

// namespace is the containerd namespace of these tests (never docker's
// "moby").
const namespace = "loki-test"

const generous = 90 * time.Second

// holder is the test acting as the lease holder: it renews the control
// dir's lease every interval until stopped.
type holder struct {
	w    *lease.Writer
	stop chan struct{}
	done chan struct{}
}

func hold(t *testing.T, dir string, interval time.Duration) *holder {
	t.Helper()
	w, err := lease.NewWriter(dir)
	if gid := groupOf(t, dir); gid != 0 {
		w, err = lease.NewGroupWriter(dir, gid) // an init in a user namespace of its own
	}
	if err != nil {
		t.Fatal(err)
	}
	h := &holder{w: w, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-tick.C:
				w.Renew()
			}
		}
	}()
	t.Cleanup(h.release)
	return h
}

var releaseMu sync.Mutex

func (h *holder) release() {
	releaseMu.Lock()
	defer releaseMu.Unlock()
	select {
	case <-h.stop:
	default:
		close(h.stop)
		<-h.done
		h.w.Close()
	}
}

// bundle makes a busybox rootfs and a control dir and returns the config
// oci-spec prints for them.
func bundle(t *testing.T, leaseDur time.Duration, flags ...string) (config, control string) {
	t.Helper()
	bb := testutil.RequireCommand(t, "busybox")
	dir := t.TempDir()
	// As root the container's root is "others" to the host (a user
	// namespace of its own): it must reach the rootfs. The test's own
	// dirs, never the host's /tmp above them.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rootfs := filepath.Join(dir, "rootfs")
	for _, d := range []string{"bin", "proc", "dev", "sys", "tmp", "etc"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootfs, "bin", "busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"sh", "cat", "tee", "sleep", "head"} {
		if err := os.Symlink("busybox", filepath.Join(rootfs, "bin", a)); err != nil {
			t.Fatal(err)
		}
	}
	control = filepath.Join(dir, "control")
	if err := os.Mkdir(control, 0o700); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"oci-spec", "--init", testutil.Binary(t, "loki-init"), "--rootfs", rootfs, "--control-dir", control,
		"--lease-duration", leaseDur.String(), "--poll-interval", "100ms"}, flags...)
	out, err := exec.Command(testutil.Binary(t, "loki-supervise"), args...).Output()
	if err != nil {
		t.Fatalf("oci-spec: %v", err)
	}
	config = filepath.Join(dir, "config.json")
	if err := os.WriteFile(config, out, 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.PrepareOCIUserNS(t, out, rootfs, control)
	return config, control
}

func groupOf(t *testing.T, dir string) int {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int(st.Gid)
}

// ctrRun returns `ctr run --rm --config CONFIG ID` against the engine.
func ctrRun(t *testing.T, addr, config string) (*exec.Cmd, string) {
	t.Helper()
	var r [6]byte
	rand.Read(r[:])
	id := fmt.Sprintf("loki-%x", r)
	cmd := exec.Command("ctr", "--address", addr, "--namespace", namespace, "run", "--rm", "--config", config, id)
	cmd.WaitDelay = 10 * time.Second
	t.Cleanup(func() {
		exec.Command("ctr", "--address", addr, "--namespace", namespace, "task", "kill", "--signal", "SIGKILL", id).Run()
		exec.Command("ctr", "--address", addr, "--namespace", namespace, "task", "delete", "--force", id).Run()
		exec.Command("ctr", "--address", addr, "--namespace", namespace, "container", "delete", id).Run()
	})
	return cmd, id
}

// startUntilReady starts a ctr run command on a stdin pipe, sends the
// prelude of `sh -c script` and waits for the peer's "ready" line. The
// writer is the task's stdin (ctr run returns only once it is closed); it
// is closed when the test ends at the latest.
func startUntilReady(t *testing.T, cmd *exec.Cmd, script string) *io.PipeWriter {
	t.Helper()
	stdinR, stdinW := io.Pipe()
	cmd.Stdin = stdinR
	t.Cleanup(func() { stdinW.Close() })
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go stdinW.Write(prelude(t, "sh", "-c", script))
	line := make([]byte, 6)
	if _, err := io.ReadFull(stdout, line); err != nil || string(line) != "ready\n" {
		t.Fatalf("peer said %q (%v)", line, err)
	}
	return stdinW
}

// prelude is the launch prelude for argv, ahead of the peer's stdin.
func prelude(t *testing.T, argv ...string) []byte {
	t.Helper()
	b, err := launch.Encode(launch.Spec{Argv: argv, Cwd: "/", Env: map[string]string{"PATH": "/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if binary.BigEndian.Uint32(b[:4]) != uint32(len(b)-4) {
		t.Fatal("prelude framing is not what Contract 2 says")
	}
	return b
}

func wait(t *testing.T, cmd *exec.Cmd, bound time.Duration) int {
	t.Helper()
	return testutil.WaitExit(t, cmd, bound)
}

// taskRunning: containerd lists the task as RUNNING.
func taskRunning(addr, id string) bool {
	out, _ := exec.Command("ctr", "--address", addr, "--namespace", namespace, "task", "ls").Output()
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == id {
			return f[2] == "RUNNING"
		}
	}
	return false
}

func containerKnown(addr, id string) bool {
	out, _ := exec.Command("ctr", "--address", addr, "--namespace", namespace, "container", "ls", "-q").Output()
	for _, l := range strings.Fields(string(out)) {
		if l == id {
			return true
		}
	}
	return false
}

// TestExitCodes: the peer's code comes back through containerd; a peer
// killed by a signal is loki-init's 125.
func TestExitCodes(t *testing.T) {
	addr := testutil.RequireContainerd(t)
	for _, tc := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 7", 7}, {"kill -9 $$", 125}} {
		t.Run(tc.script, func(t *testing.T) {
			config, control := bundle(t, 5*time.Second)
			hold(t, control, 200*time.Millisecond)
			cmd, _ := ctrRun(t, addr, config)
			cmd.Stdin = bytes.NewReader(prelude(t, "sh", "-c", tc.script))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if code := wait(t, cmd, generous); code != tc.want {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.want, stderr.String())
			}
		})
	}
}

// TestStdioByteExact: 8 MiB after the prelude reach the peer, which
// copies them to stdout and stderr; both come back identical. The peer
// waits 1 s before exiting: ctr run cancels its copy of the task's output
// as soon as the task exits (the client's Task.Delete cancels the IO), so
// bytes loki-init already wrote but containerd had not relayed were lost
// (stderr 7.2-7.6 of 8 MiB in 2 of 3 runs without the pause).
func TestStdioByteExact(t *testing.T) {
	addr := testutil.RequireContainerd(t)
	const size = 8 << 20
	input := make([]byte, size)
	rand.Read(input)
	want := sha256.Sum256(input)
	// --wait-after-eof: stdin's EOF alone would end the peer 1 s later,
	// whatever it still has to write (the single-shot rule).
	config, control := bundle(t, 5*time.Second, "--wait-after-eof")
	hold(t, control, 200*time.Millisecond)
	cmd, _ := ctrRun(t, addr, config)
	cmd.Stdin = io.MultiReader(bytes.NewReader(prelude(t, "sh", "-c", "tee /proc/self/fd/2; sleep 1")), bytes.NewReader(input))
	outH, errH := sha256.New(), sha256.New()
	var outN, errN countWriter
	cmd.Stdout, cmd.Stderr = io.MultiWriter(outH, &outN), io.MultiWriter(errH, &errN)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := wait(t, cmd, 3*generous); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if outN != size || errN != size || !bytes.Equal(outH.Sum(nil), want[:]) || !bytes.Equal(errH.Sum(nil), want[:]) {
		t.Fatalf("stdout %d bytes %x, stderr %d bytes %x; want %d bytes %x", outN, outH.Sum(nil), errN, errH.Sum(nil), size, want)
	}
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

// TestLeaseExpiry: once the holder stops renewing (it died, or its node
// did), loki-init ends the task within the lease plus one poll (slack
// for a loaded machine) with 124, and --rm leaves no container.
func TestLeaseExpiry(t *testing.T) {
	addr := testutil.RequireContainerd(t)
	const (
		leaseDur = 2 * time.Second
		slack    = 4 * time.Second
	)
	config, control := bundle(t, leaseDur)
	h := hold(t, control, 200*time.Millisecond)
	cmd, id := ctrRun(t, addr, config)
	stdinW := startUntilReady(t, cmd, "sleep 1000 & echo ready; wait")
	time.Sleep(leaseDur) // renewals keep it alive past one lease
	if cmd.ProcessState != nil {
		t.Fatal("the task ended while the lease was renewed")
	}
	h.release()
	stopped := time.Now()
	bound := leaseDur + 100*time.Millisecond + slack
	if !testutil.WaitUntil(bound, func() bool { return !taskRunning(addr, id) }) {
		t.Fatalf("task %s still running %v after the holder stopped", id, bound)
	}
	took := time.Since(stopped)
	if took < leaseDur/2 {
		t.Fatalf("ended %v after the holder stopped: before the lease could expire", took)
	}
	// ctr run returns only once its stdin copy ends: the client hangs up.
	stdinW.Close()
	if code := wait(t, cmd, generous); code != 124 {
		t.Fatalf("exit %d after the holder stopped, want 124", code)
	}
	if !testutil.WaitUntil(10*time.Second, func() bool { return !containerKnown(addr, id) }) {
		t.Fatalf("container %s still known to containerd", id)
	}
	t.Logf("task ended %v after the last renewal (lease %v)", took.Round(time.Millisecond), leaseDur)
}

// TestLeaseRole: `loki-supervise lease` is the holder. While its stdin
// (the owner's stream) stays open the task runs past several leases; once
// the owner hangs up it exits 0 and the task ends at the lease bound, 124.
func TestLeaseRole(t *testing.T) {
	addr := testutil.RequireContainerd(t)
	const (
		leaseDur = 2 * time.Second
		slack    = 4 * time.Second
	)
	config, control := bundle(t, leaseDur)
	holder := exec.Command(testutil.Binary(t, "loki-supervise"), "lease", "--control-dir", control, "--renew-interval", "200ms")
	owner, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var holderErr bytes.Buffer
	holder.Stderr = &holderErr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	cmd, id := ctrRun(t, addr, config)
	stdinW := startUntilReady(t, cmd, "echo ready; sleep 1000")
	time.Sleep(2 * leaseDur)
	if !taskRunning(addr, id) {
		t.Fatal("the task ended although the holder renewed the lease")
	}
	owner.Close() // the owner hangs up
	stopped := time.Now()
	if code := wait(t, holder, 10*time.Second); code != 0 {
		t.Fatalf("holder exit %d after its stdin closed (stderr %q)", code, holderErr.String())
	}
	bound := leaseDur + 100*time.Millisecond + slack
	if !testutil.WaitUntil(bound, func() bool { return !taskRunning(addr, id) }) {
		t.Fatalf("task %s still running %v after the owner hung up", id, bound)
	}
	took := time.Since(stopped)
	stdinW.Close()
	if code := wait(t, cmd, generous); code != 124 {
		t.Fatalf("ctr exit %d, want 124", code)
	}
	t.Logf("task ended %v after the owner hung up (lease %v)", took.Round(time.Millisecond), leaseDur)
}
