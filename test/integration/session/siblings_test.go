//go:build linux

package session

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
	"github.com/loki-sh/loki/internal/testutil/backends"
)

// intrudeScript is run by one session's peer against a sibling session's
// control dir: $1 is the control root and $2 the sibling's control dir, both
// as the peer would see them if nothing hid them. It prints "OK name" for
// every attempt that worked, "FAIL name" for the others.
const intrudeScript = `root=$1 sib=$2
try() { n=$1; shift; if "$@" >/dev/null 2>&1; then echo "OK $n"; else echo "FAIL $n"; fi; }
try list-sibling ls "$sib"
try read-sibling-lease cat "$sib/lease"
try write-sibling-lease sh -c 'printf 99999999 > "$1/lease"' _ "$sib"
try create-in-sibling touch "$sib/forged"
try create-in-root mkdir "$root/session-forged"
try via-proc-1-root cat "/proc/1/root$sib/lease"
try unmask-in-new-userns unshare --user --map-root-user --mount sh -c 'umount -l "$1" && printf 99999999 > "$2/lease"' _ "$root" "$sib"
echo "ROOT $(ls -A "$root" 2>/dev/null | tr '\n' ' ')"
echo DONE`

// siblingEnv is where a test's sessions keep their dirs and how they run.
type siblingEnv struct {
	hostRoot string   // the control root on the host
	peerRoot string   // the same dir as the peer would see it, unhidden
	flags    []string // extra loki-supervise flags, besides --control-root
	wrap     func(*exec.Cmd)
	// intruderRoot, when set, is the intruder's own control root: a
	// session of the same user with another one (another
	// XDG_RUNTIME_DIR), whose writable cwd holds the sibling's.
	intruderRoot string
}

// siblingSetup is one way a sibling's control dir could become visible.
type siblingSetup struct {
	name    string
	backend backend
	prepare func(t *testing.T) siblingEnv
}

func siblingSetups() []siblingSetup {
	// Namespace: the peer sees the host's filesystem, control root included.
	setups := []siblingSetup{{name: "namespace", backend: get("namespace"),
		prepare: func(t *testing.T) siblingEnv {
			root := privateDir(t, t.TempDir(), "ctl", 0)
			return siblingEnv{hostRoot: root, peerRoot: root}
		}}, {name: "namespace-userns", backend: get("namespace"), prepare: asNobody},
		// The control root inside the cwd, under /tmp (an XDG_RUNTIME_DIR
		// below the workspace): the private /tmp binds the cwd back.
		{name: "namespace-userns-in-cwd", backend: get("namespace"), prepare: func(t *testing.T) siblingEnv {
			env := asNobody(t)
			wrap := env.wrap
			env.wrap = func(cmd *exec.Cmd) {
				wrap(cmd)
				cmd.Dir = filepath.Dir(env.hostRoot)
			}
			return env
		}},
		{name: "namespace-in-cwd", backend: get("namespace"), prepare: func(t *testing.T) siblingEnv {
			top := t.TempDir()
			root := privateDir(t, top, "ctl", 0)
			return siblingEnv{hostRoot: root, peerRoot: root, wrap: func(cmd *exec.Cmd) { cmd.Dir = top }}
		}},
		// The sibling's control root inside the intruder's cwd, the
		// intruder's own elsewhere: the peer (the same host uid in
		// user-namespace mode) owns the sibling's dirs.
		{name: "namespace-userns-other-root", backend: get("namespace"), prepare: func(t *testing.T) siblingEnv {
			env := asNobody(t)
			wrap := env.wrap
			env.wrap = func(cmd *exec.Cmd) {
				wrap(cmd)
				cmd.Dir = filepath.Dir(env.hostRoot)
			}
			env.intruderRoot = privateDir(t, t.TempDir(), "ctl-intruder", testutil.Nobody)
			return env
		}}}
	for _, rt := range []string{"crun", "runc"} {
		b := get("oci-" + rt)
		// A rw bind of the control root's parent shows every session dir.
		flags := []string{}
		if rt == "runc" {
			// runc 1.1 cannot idmap a writable bind, so this one needs
			// the host's ids: the mask then holds against a peer that
			// is the host's uid 0, the case it exists for.
			flags = []string{"--userns", "host"}
		}
		setups = append(setups, siblingSetup{name: b.Name + "-bind", backend: b,
			prepare: func(t *testing.T) siblingEnv {
				parent := t.TempDir()
				root := privateDir(t, parent, "ctl", 0)
				return siblingEnv{hostRoot: root, peerRoot: "/hostview/ctl", flags: append([]string{"--bind", parent + ":/hostview"}, flags...)}
			}})
		// A rootfs that contains the control root.
		setups = append(setups, siblingSetup{name: b.Name + "-in-rootfs", backend: b,
			prepare: func(t *testing.T) siblingEnv {
				dir, err := os.MkdirTemp(rootfs(t), "ctl-")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(dir) })
				return siblingEnv{hostRoot: dir, peerRoot: "/" + filepath.Base(dir)}
			}})
	}
	// Docker: a rw bind of the control root's parent, as for oci.
	setups = append(setups, siblingSetup{name: "docker-bind", backend: get("docker"),
		prepare: func(t *testing.T) siblingEnv {
			parent := t.TempDir()
			root := privateDir(t, parent, "ctl", 0)
			return siblingEnv{hostRoot: root, peerRoot: "/hostview/ctl", flags: []string{"--bind", parent + ":/hostview"}}
		}})
	return setups
}

// asNobody runs the sessions as an unprivileged user, so that the namespace
// backend takes its user-namespace path (the peer is root only inside it,
// and owns the control root outside): the namespace-userns row, whose
// Require skips on a host without unprivileged user namespaces (and
// fails under CI).
func asNobody(t *testing.T) siblingEnv {
	t.Helper()
	backends.Get("namespace-userns").Require(t)
	u := testutil.AsNobody(t)
	wrap := func(cmd *exec.Cmd) {
		cmd.Path, cmd.Args[0] = u.Supervise, u.Supervise
		for i := range cmd.Args {
			if i > 0 && cmd.Args[i-1] == "--init" {
				cmd.Args[i] = u.Init
			}
		}
		cmd.SysProcAttr = testutil.AsUser(testutil.Nobody)
	}
	return siblingEnv{hostRoot: u.ControlRoot, peerRoot: u.ControlRoot, wrap: wrap}
}

// privateDir makes parent/name, 0700 and owned by uid.
func privateDir(t *testing.T, parent, name string, uid int) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkSiblings: all sessions of a user share one control root
// (/run/loki for root). While one session runs, the peer of another must
// not list, read or write its control dir (its lease: a peer that can
// renew it keeps that session alive after its host stopped), nor add
// anything to the control root, however the backend shows it the host.
func checkSiblings(t *testing.T, s siblingSetup) {
	s.backend.Require(t) // skips before any setup when a tool is missing
	env := s.prepare(t)
	flags := append(env.flags, "--control-root", env.hostRoot)
	command := func(peer ...string) *exec.Cmd {
		cmd := supervise(t, s.backend, flags, peer...)
		if env.wrap != nil {
			env.wrap(cmd)
		}
		return cmd
	}
	hostRoot := env.hostRoot
	sib := startSibling(t, command("sh", "-c", "echo ready; exec cat >/dev/null"))
	sibDir := onlySessionDir(t, hostRoot)
	peerSib := filepath.Join(env.peerRoot, filepath.Base(sibDir), "control")
	intruder := command("sh", "-c", intrudeScript, "sh", env.peerRoot, peerSib)
	if env.intruderRoot != "" {
		intruder = supervise(t, s.backend, append(env.flags, "--control-root", env.intruderRoot), "sh", "-c", intrudeScript, "sh", env.peerRoot, peerSib)
		if env.wrap != nil {
			env.wrap(intruder)
		}
	}
	r := run(t, intruder, "", generous)
	if r.code != 0 || !strings.Contains(r.stdout, "DONE") {
		t.Fatalf("intruder exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	checkIntrusion(t, r.stdout, filepath.Base(sibDir))
	for _, p := range []string{filepath.Join(sibDir, "control", "forged"), filepath.Join(hostRoot, "session-forged")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("the intruder created %s", p)
		}
	}
	sib.stop(t)
}

func checkIntrusion(t *testing.T, out, sibName string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		switch {
		case strings.HasPrefix(line, "OK "):
			t.Errorf("the intruder could %s", strings.TrimPrefix(line, "OK "))
		case strings.HasPrefix(line, "ROOT ") && strings.Contains(line, sibName):
			t.Errorf("the intruder lists the sibling in the control root: %q", line)
		}
	}
}

// sibling is a running session whose peer waits for stdin EOF.
type sibling struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func startSibling(t *testing.T, cmd *exec.Cmd) *sibling {
	t.Helper()
	stdin, lines, _ := startPiped(t, cmd)
	s := &sibling{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill() // our own child, by its os.Process
			cmd.Wait()
		}
	})
	if got := lines.next(t, generous); got != "ready" {
		t.Fatalf("sibling said %q", got)
	}
	return s
}

// stop ends the sibling by stdin EOF; it must still have been running.
func (s *sibling) stop(t *testing.T) {
	t.Helper()
	s.stdin.Close()
	if code := testutil.WaitExit(t, s.cmd, generous); code != 0 {
		t.Errorf("sibling exit %d, want 0 (it was running all along)", code)
	}
}

// onlySessionDir returns the one session dir under root (the sibling's:
// it exists once the sibling's peer has spoken).
func onlySessionDir(t *testing.T, root string) string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, "session-*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("session dirs under %s: %v (%v), want exactly one", root, dirs, err)
	}
	return dirs[0]
}
