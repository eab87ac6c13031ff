//go:build linux

package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
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
	hostileMaxLines  = 10 + 3   // the first refusals, the proxy's two summaries, the session's refusal summary
)

// scenarioHostileEgress: a peer attacks the egress proxy with three
// unterminated 128 MiB headers at once, 1,500 idle connections and 300
// refused names. The supervisor's peak RSS stays under 32 MiB, its
// descriptors under the connection bound, the user's stderr gets a few
// lines; the headers are answered 431, the connections past the bound
// 503. A backend without the proxy refuses --allow-host (127, one line).
func scenarioHostileEgress(t *testing.T, b backend) {
	flags := []string{"--allow-host", "example.com"}
	if b.Name != "namespace" {
		r := run(t, supervise(t, b, flags, "/bin/true"), "", generous)
		if r.code != 127 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "--allow-host") {
			t.Fatalf("exit %d, stderr %q: want 127 and one line refusing --allow-host", r.code, r.stderr)
		}
		return
	}
	cmd := supervise(t, b, flags, hostile(t), "egress")
	cmd.Dir = "/"
	var heldFDs, peakKiB int
	got, stderr := holdSession(t, cmd, func(hold string, _ map[string]string) {
		if hold == "idle" {
			heldFDs = countFDs(t, cmd.Process.Pid)
		} else {
			peakKiB = statusKiB(t, cmd.Process.Pid, "VmHWM")
		}
	})
	t.Logf("supervisor: peak RSS %d KiB, %d fds with the idle connections held; peer saw %v; %d stderr lines",
		peakKiB, heldFDs, got, strings.Count(stderr, "\n"))
	if peakKiB > hostileMaxRSSKiB {
		t.Errorf("the supervisor's peak RSS is %d KiB, want at most %d", peakKiB, hostileMaxRSSKiB)
	}
	if heldFDs > hostileMaxFDs {
		t.Errorf("the supervisor held %d descriptors, want at most %d", heldFDs, hostileMaxFDs)
	}
	if n := strings.Count(stderr, "\n"); n > hostileMaxLines {
		t.Errorf("%d lines on stderr, want at most %d:\n%s", n, hostileMaxLines, stderr)
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

// unixServer listens on path (0777: only a mask or a private dir may
// refuse) and answers every connection by closing it.
type unixServer struct{ ln net.Listener }

func serveUnix(t *testing.T, path string) *unixServer {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	s := &unixServer{ln: ln}
	t.Cleanup(func() { s.ln.Close() })
	return s
}

// recreate does what a daemon's restart does: unlink, then bind again
// (a new inode at the same path).
func (s *unixServer) recreate(t *testing.T, path string) {
	t.Helper()
	s.ln.Close() // unlinks path
	*s = *serveUnix(t, path)
}

// scenarioHostSockets: the host's sockets stay out of reach for the
// whole session, on every backend that confines the filesystem. A
// daemon under /run that re-creates its socket (unlink, bind) while the
// peer polls it, a socket made under /run after the start, and one in
// /var/tmp present at the start are refused; --socket shows one. oci
// and docker see the host through binds of /run and /var/tmp (the
// peer's paths change, the rule does not). The Docker engine's own
// socket is probed too, never restarted. A socket made after the start
// outside /run and /tmp (/var/tmp here) is what remains reachable: it
// is logged, not asserted (docs/confinement.md).
func scenarioHostSockets(t *testing.T, b backend) {
	var r [6]byte
	rand.Read(r[:])
	tag := "loki-sock-" + hex.EncodeToString(r[:])
	run := filepath.Join("/run", tag)
	vartmp := filepath.Join("/var/tmp", tag)
	for _, d := range []string{run, vartmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	daemon := serveUnix(t, filepath.Join(run, "daemon.sock"))
	serveUnix(t, filepath.Join(vartmp, "early.sock"))
	serveUnix(t, filepath.Join(vartmp, "opted.sock"))
	host := []string{filepath.Join(run, "daemon.sock"), filepath.Join(run, "late.sock"), filepath.Join(vartmp, "early.sock"),
		filepath.Join(vartmp, "late.sock"), filepath.Join(vartmp, "opted.sock")}
	if _, err := os.Stat("/run/docker.sock"); err == nil {
		host = append(host, "/run/docker.sock")
	}
	bin := hostile(t)
	flags := []string{"--socket", filepath.Join(vartmp, "opted.sock")}
	peer := append([]string{bin}, host...)
	view := func(p string) string { return p }
	if b.Name != "namespace" {
		// The container sees the host's dirs only through binds.
		flags = append(flags, "--bind", "/run:/hostrun:ro", "--bind", "/var/tmp:/hostvartmp:ro", "--bind", filepath.Dir(bin)+":/hostile:ro")
		view = func(p string) string {
			if p == filepath.Join(vartmp, "opted.sock") {
				return p // --socket shows it at its own path
			}
			if rel, ok := strings.CutPrefix(p, "/run/"); ok {
				return "/hostrun/" + rel
			}
			return "/hostvartmp/" + strings.TrimPrefix(p, "/var/tmp/")
		}
		peer = []string{"/hostile/hostile"}
		for _, p := range host {
			peer = append(peer, view(p))
		}
	}
	cmd := supervise(t, b, flags, append([]string{peer[0], "sockets"}, peer[1:]...)...)
	cmd.Dir = "/"
	got, _ := holdSession(t, cmd, func(hold string, _ map[string]string) {
		if hold == "sockets" {
			daemon.recreate(t, host[0])
			serveUnix(t, host[1])
			serveUnix(t, host[3])
		}
	})
	t.Logf("peer saw %v", got)
	for i, p := range host {
		before, after := got[fmt.Sprintf("before_%d", i)], got[fmt.Sprintf("after_%d", i)]
		switch {
		case p == host[4]: // --socket
			if before != "connected" {
				t.Errorf("--socket %s: %s at the start, want connected", view(p), before)
			}
		case p == host[3]:
			t.Logf("a socket made in /var/tmp after the start: %s (reachable by design, docs/confinement.md)", after)
		default:
			if before == "connected" || after == "connected" {
				t.Errorf("%s (host %s): %s at the start, %s after the host re-created or made it; want never connected", view(p), p, before, after)
			}
		}
	}
}

// scenarioTmpFull: the private /tmp and /dev/shm stop at --tmp-size
// (ENOSPC, not half the host's RAM), and what fills them is charged to
// the session's memory cgroup, where --memory-max counts it. A backend
// without a private /tmp refuses --tmp-size (127, one line).
func scenarioTmpFull(t *testing.T, b backend) {
	const size = 16 << 20
	flags := []string{"--tmp-size", "16M", "--memory-max", "256M"}
	script := `echo "ns=$(readlink /proc/self/ns/pid)"
dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>/dev/null; echo "tmp_rc=$?"; echo "tmp=$(wc -c </tmp/fill)"
dd if=/dev/zero of=/dev/shm/fill bs=1M count=64 2>/dev/null; echo "shm=$(wc -c </dev/shm/fill)"
echo hold=filled; read x; echo hold=done`
	if b.Name == "none" {
		r := run(t, supervise(t, b, []string{"--tmp-size", "16M"}, "/bin/true"), "", generous)
		if r.code != 127 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "--tmp-size") {
			t.Fatalf("exit %d, stderr %q: want 127 and one line refusing --tmp-size", r.code, r.stderr)
		}
		return
	}
	cmd := supervise(t, b, flags, "/bin/sh", "-c", script)
	var charged int64
	got, _ := holdSession(t, cmd, func(hold string, got map[string]string) {
		if hold == "filled" {
			charged = sessionMemory(t, got["ns"])
		}
	})
	t.Logf("peer saw %v; the session's memory cgroup holds %d bytes", got, charged)
	if got["tmp_rc"] == "0" || got["tmp"] != strconv.Itoa(size) {
		t.Errorf("/tmp took %s bytes (dd exit %s), want %d and ENOSPC", got["tmp"], got["tmp_rc"], size)
	}
	if got["shm"] != strconv.Itoa(size) {
		t.Errorf("/dev/shm took %s bytes, want %d", got["shm"], size)
	}
	if charged < 2*size {
		t.Errorf("the session's memory cgroup holds %d bytes with /tmp and /dev/shm full, want at least %d", charged, 2*size)
	}
}

// sessionMemory is the memory charged to the cgroup of a process of the
// PID namespace ns (cgroup v1's memory controller or v2's).
func sessionMemory(t *testing.T, ns string) int64 {
	t.Helper()
	pids := testutil.LiveNamespacePIDs(ns)
	if len(pids) == 0 {
		t.Fatalf("no process in the session's namespace %s", ns)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pids[0]) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var file string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		if slices.Contains(strings.Split(f[1], ","), "memory") {
			file = "/sys/fs/cgroup/memory" + f[2] + "/memory.usage_in_bytes"
			break
		}
		if f[0] == "0" && f[1] == "" {
			if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
				file = "/sys/fs/cgroup" + f[2] + "/memory.current"
			}
		}
	}
	if file == "" {
		t.Fatalf("no memory cgroup in %q", b)
	}
	v, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// holdSession runs cmd, whose peer prints key=value lines and waits for
// a line on stdin after each "hold=NAME": onHold(NAME, the lines so far)
// runs before the answer. After hold=done the session must exit 0. It
// returns the lines and the supervisor's stderr.
func holdSession(t *testing.T, cmd *exec.Cmd, onHold func(hold string, got map[string]string)) (map[string]string, string) {
	t.Helper()
	stdin, lines, stderr := startPiped(t, cmd)
	got := map[string]string{}
	for {
		k, v, _ := strings.Cut(lines.next(t, 120*time.Second), "=")
		if k != "hold" {
			got[k] = v
			continue
		}
		onHold(v, got)
		fmt.Fprintln(stdin)
		if v == "done" {
			break
		}
	}
	stdin.Close()
	if code := testutil.WaitExit(t, cmd, generous); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	return got, stderr.String()
}
