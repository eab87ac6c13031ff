//go:build linux

package tty

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

// wait bounds every wait for the screen (a loaded 2-vCPU VM).
const wait = 60 * time.Second

// pane is one tmux server of the test's own, with one window running a
// host shell (bash, no rc files, a fixed prompt).
type pane struct {
	t    *testing.T
	sock string
	dir  string // scratch for the host shell's files
	tag  string // LOKI_TTY_TEST's value in the peers' environment
}

// newPane starts a tmux server on a private socket with a window of rows x
// cols; it is killed (that server only) when the test ends.
func newPane(t *testing.T, rows, cols int) *pane {
	t.Helper()
	testutil.RequireCommand(t, "tmux")
	bash := testutil.RequireCommand(t, "bash")
	dir := t.TempDir()
	p := &pane{t: t, sock: filepath.Join(dir, "tmux.sock"), dir: dir, tag: filepath.Base(dir) + strconv.Itoa(os.Getpid())}
	env := "env -i PATH=" + panePath + " TERM=xterm-256color HOME=" + dir + " HISTFILE=/dev/null PS1='host$ ' "
	p.tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows),
		env+bash+" --norc --noprofile")
	server, err := strconv.Atoi(strings.TrimSpace(p.tmux("display-message", "-p", "#{pid}")))
	if err != nil {
		t.Fatal(err)
	}
	shell := p.shellPID()
	// Our server only (its own socket), and gone before TempDir's
	// removal: its shell may still be writing there.
	t.Cleanup(func() {
		testutil.TmuxCommand(p.sock, "kill-server").Run()
		testutil.WaitUntil(wait, func() bool { return gone(server) && gone(shell) })
	})
	// window-size manual: resize-window sets the size, no client decides it.
	p.tmux("set-option", "-g", "window-size", "manual")
	p.waitFor(regexp.MustCompile(`host\$ $`))
	return p
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	return testutil.Tmux(p.t, p.sock, args...)
}

// send types a line (or keys with literal false: tmux key names like C-c).
func (p *pane) line(s string) { p.t.Helper(); p.tmux("send-keys", "-t", "t", "-l", s); p.keys("Enter") }

func (p *pane) keys(k ...string) {
	p.t.Helper()
	p.tmux(append([]string{"send-keys", "-t", "t"}, k...)...)
}

// screen is the pane's visible text, trailing blank lines dropped.
func (p *pane) screen() string {
	p.t.Helper()
	return strings.TrimRight(p.tmux("capture-pane", "-p", "-J", "-t", "t"), "\n")
}

// waitFor waits until the screen matches re and returns the match's
// groups.
func (p *pane) waitFor(re *regexp.Regexp) []string {
	p.t.Helper()
	var m []string
	if !testutil.WaitUntil(wait, func() bool { m = re.FindStringSubmatch(p.screen()); return m != nil }) {
		p.t.Fatalf("screen never matched %q:\n%s", re, p.screen())
	}
	return m
}

// mark runs cmd in the current shell followed by an echo of a fresh
// marker, and returns the screen text cmd printed (between the command
// line and the marker). The marker is computed by the shell, so the typed
// command line never matches it.
var markN struct {
	sync.Mutex
	n int
}

func (p *pane) mark(cmd string) string {
	p.t.Helper()
	markN.Lock()
	markN.n++
	n := markN.n
	markN.Unlock()
	p.line(fmt.Sprintf("%s; echo M$((%d+1))M", cmd, n*1000))
	want := fmt.Sprintf("M%dM", n*1000+1)
	// From the last echo of the command line: a line typed ahead while a
	// job ran is echoed once by the terminal and once more by the shell.
	re := regexp.MustCompile(`(?s)^.*M\$\(\(` + strconv.Itoa(n*1000) + `\+1\)\)M\n(?:(.*?)\n)?` + want)
	return strings.TrimSpace(p.waitFor(re)[1])
}

// size is the pane's rows and columns as tmux reports them.
func (p *pane) size() string {
	p.t.Helper()
	return strings.TrimSpace(p.tmux("display-message", "-p", "-t", "t", "#{pane_height} #{pane_width}"))
}

func (p *pane) resize(rows, cols int) {
	p.t.Helper()
	p.tmux("resize-window", "-t", "t", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows))
}

// shellPID is the host shell's pid (the pane's process).
func (p *pane) shellPID() int {
	p.t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(p.tmux("display-message", "-p", "-t", "t", "#{pane_pid}")))
	if err != nil {
		p.t.Fatal(err)
	}
	return pid
}

// backend is a row of the shared table (testutil/backends).
type backend = backends.Backend

// rows are the backends with loki-init that a root supervisor runs: the
// suite checks what loki-init does with the session's terminal, and the
// unprivileged row is the confine suite's.
func rows() []backend {
	var out []backend
	for _, b := range backends.All() {
		if b.Init() && !b.Unprivileged {
			out = append(out, b)
		}
	}
	return out
}

// shell is the peer's interactive shell: the host's bash where the peer
// sees the host's files, busybox's sh in a container.
func shell(b backend) []string {
	if b.Container {
		return []string{"sh", "-i"}
	}
	return []string{"bash", "--norc", "--noprofile", "-i"}
}

// session is the command line of loki-supervise session -t for b, with
// the peer's env kept to PATH/TERM/HOME and a fixed prompt.
func session(t *testing.T, p *pane, b backend, extra []string, peer ...string) string {
	t.Helper()
	args := []string{testutil.Binary(t, "loki-supervise"), "session", "-t", "--init", testutil.Binary(t, "loki-init")}
	args = append(args, b.Flags(t, backends.Busybox)...)
	args = append(args, "--env", "PS1=peer$ ", "--env", tagEnv+"="+p.tag)
	args = append(args, extra...)
	args = append(args, "--")
	if len(peer) == 0 {
		peer = shell(b)
	}
	args = append(args, peer...)
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// rootfs is the shared busybox root filesystem (testutil.BusyboxRootfs).
func rootfs(t *testing.T) string { return testutil.BusyboxRootfs(t) }

func TestMain(m *testing.M) { testutil.Main(m) }

// children lists the pids whose parent is pid.
func children(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// descendantNamed finds a descendant of pid whose comm is name.
func descendantNamed(pid int, name string) int {
	for _, c := range children(pid) {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c)); strings.TrimSpace(string(comm)) == name {
			return c
		}
		if d := descendantNamed(c, name); d > 0 {
			return d
		}
	}
	return 0
}

// gone reports whether pid has exited (a zombie counts: the daemonised
// tmux server is reaped by whoever adopted it, not by us).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}

// panePath is the PATH of the pane's shell, and so of the peer.
const panePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// peerCommand finds name where the peer looks for it (panePath), not in
// the test's own PATH: a tool under root's 0700 home is out of a
// confined peer's reach.
func peerCommand(t *testing.T, name string) string {
	t.Helper()
	for _, d := range filepath.SplitList(panePath) {
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return filepath.Join(d, name)
		}
	}
	testutil.RequireCommand(t, name) // skips or fails, naming the package
	t.Fatalf("%s is installed, but not in %s (the peer's PATH)", name, panePath)
	return ""
}

// tagEnv marks the processes of a test's sessions: a container's
// processes are not our descendants (Docker's daemon starts them), so
// they are found by this variable in their environment.
const tagEnv = "LOKI_TTY_TEST"

// peerProc finds a process named name carrying p's tag, and its state
// letter (R, S, T, ...).
func (p *pane) peerProc(name string) (pid int, state byte) {
	want := []byte(tagEnv + "=" + p.tag + "\x00")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", id))
		if strings.TrimSpace(string(comm)) != name {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", id))
		if !bytes.Contains(env, want) {
			continue
		}
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", id))
		if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) {
			return id, st[i+2]
		}
	}
	return 0, 0
}

// parentOf is pid's parent pid (0 when pid is gone).
func parentOf(pid int) int {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(st, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(st[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
