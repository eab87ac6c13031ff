//go:build linux

package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/testutil"
)

// install is test/agents with its node_modules, and the loki binaries,
// shown at a path every user can reach (the clone may be under root's
// 0700 home): a read-only bind under /var/tmp.
type install struct {
	dir  string // .../agents: drive.mjs and node_modules
	bin  string // loki-supervise and loki-init
	node string
}

var (
	once       sync.Once
	shared     install
	installErr error
)

func setup(t *testing.T) install {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequirePIDNamespace(t)
	node := testutil.RequireCommand(t, "node")
	npm := testutil.RequireCommand(t, "npm")
	sup, init := testutil.Binary(t, "loki-supervise"), testutil.Binary(t, "loki-init")
	once.Do(func() {
		src := filepath.Join(testutil.ModuleRoot(t), "test", "agents")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if _, err := os.Stat(filepath.Join(src, "node_modules", ".package-lock.json")); err != nil {
			cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
			cmd.Dir = src
			if out, err := cmd.CombinedOutput(); err != nil {
				installErr = fmt.Errorf("npm ci in %s: %v\n%s", src, err, out)
				return
			}
		}
		top, err := os.MkdirTemp("/var/tmp", "loki-agents-")
		if err != nil {
			installErr = err
			return
		}
		os.Chmod(top, 0o755)
		shared = install{dir: filepath.Join(top, "agents"), bin: filepath.Join(top, "bin"), node: node}
		for _, d := range []string{shared.dir, shared.bin} {
			os.Mkdir(d, 0o755)
		}
		if err := unix.Mount(src, shared.dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			installErr = err
			return
		}
		for _, b := range []string{sup, init} {
			data, err := os.ReadFile(b)
			if err == nil {
				err = os.WriteFile(filepath.Join(shared.bin, filepath.Base(b)), data, 0o755)
			}
			if err != nil {
				installErr = err
				return
			}
		}
	})
	if installErr != nil {
		t.Fatal(installErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		// Only once the bind is gone: through it RemoveAll would empty
		// the clone's test/agents.
		if err := unix.Unmount(shared.dir, unix.MNT_DETACH); err == nil || errors.Is(err, unix.EINVAL) {
			os.RemoveAll(filepath.Dir(shared.dir))
		} else {
			fmt.Fprintf(os.Stderr, "unmount %s: %v (left in place)\n", shared.dir, err)
		}
	}
	os.Exit(code)
}

// agent is one ACP agent: its command under node_modules/.bin.
type agent struct {
	name string
	argv []string
}

var acpAgents = []agent{
	{"claude-agent-acp", []string{"claude-agent-acp"}},
	{"gemini", []string{"gemini", "--acp"}},
	{"codex-acp", []string{"codex-acp"}},
}

// layout makes a HOME of uid's and a project inside it.
type layout struct {
	name   string
	parent string
	mode   os.FileMode
}

var layouts = []layout{
	{"home-0700", "/var/tmp", 0o700},
	{"home-0755", "/var/tmp", 0o755},
	{"home-under-tmp", os.TempDir(), 0o700},
}

func (l layout) make(t *testing.T, uid int) (home, proj string, err error) {
	t.Helper()
	home, err = os.MkdirTemp(l.parent, "loki-agent-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	proj = filepath.Join(home, "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{home, proj} {
		if err := os.Chown(d, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	return home, proj, os.Chmod(home, l.mode)
}

// transcript is drive.mjs's line.
type transcript struct {
	Steps []json.RawMessage `json:"steps"`
	Exit  struct {
		Code   *int   `json:"code"`
		Signal string `json:"signal"`
		Killed string `json:"killed"`
	} `json:"exit"`
	StderrTail []string `json:"stderrTail"`
}

// drive runs the client as uid in proj with HOME, against cmd.
func drive(t *testing.T, in install, uid int, home, proj string, cmd []string) transcript {
	t.Helper()
	args := append([]string{filepath.Join(in.dir, "drive.mjs"), "--cwd", proj, "--timeout-ms", "45000", "--eof-ms", "3000", "--"}, cmd...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, in.node, args...)
	c.Dir = proj
	c.Env = []string{"HOME=" + home, "PATH=" + filepath.Join(in.dir, "node_modules", ".bin") + ":" + filepath.Dir(in.node) + ":/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}
	if uid == 0 {
		// Claude Code refuses to run as root unless told it is in a
		// sandbox; the direct run gets the same.
		c.Env = append(c.Env, "IS_SANDBOX=1")
	}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if uid != 0 {
		c.SysProcAttr.Credential = testutil.AsUser(uid).Credential
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		t.Fatalf("drive.mjs: %v\nstderr %s\nstdout %s", err, errb.String(), out.String())
	}
	var tr transcript
	if err := json.Unmarshal(out.Bytes(), &tr); err != nil {
		t.Fatalf("drive.mjs printed %q: %v (stderr %s)", out.String(), err, errb.String())
	}
	return tr
}

// session is cmd behind the default session (as uid: nobody gets a
// control root of its own).
func session(t *testing.T, in install, uid int, cmd []string) []string {
	t.Helper()
	ctl := t.TempDir()
	os.Chmod(filepath.Dir(ctl), 0o755)
	if err := os.Chown(ctl, uid, uid); err != nil {
		t.Fatal(err)
	}
	s := []string{filepath.Join(in.bin, "loki-supervise"), "session", "--init", filepath.Join(in.bin, "loki-init"), "--control-root", ctl}
	if uid == 0 {
		s = append(s, "--env", "IS_SANDBOX")
	} else {
		// nobody has no cgroup to make here: no note on the terminal.
		s = append(s, "--pids-max", "max")
	}
	return append(append(s, "--"), cmd...)
}

// TestACPAgents: each real ACP agent holds the same conversation through
// the default session as run directly (initialize, session/new, a
// prompt refused for lack of credentials, cancel, EOF), on every layout,
// as root (private user namespace) and as nobody. Before, under the
// default session gemini crashed on mkdir ~/.gemini, codex-acp exited
// "Read-only file system", claude-agent-acp answered session/new with
// "Query closed before response received", and as root any project in
// a 0700 HOME failed to start (127).
func TestACPAgents(t *testing.T) {
	in := setup(t)
	for _, uid := range []int{0, testutil.Nobody} {
		for _, a := range acpAgents {
			var direct *transcript
			for _, l := range layouts {
				t.Run(fmt.Sprintf("uid%d/%s/%s", uid, a.name, l.name), func(t *testing.T) {
					home, proj, err := l.make(t, uid)
					if err != nil {
						t.Fatal(err)
					}
					if direct == nil {
						d := drive(t, in, uid, home, proj, a.argv)
						direct = &d
						if len(d.Steps) < 2 {
							t.Fatalf("the direct run ended early: %+v", d)
						}
					}
					home2, proj2, err := l.make(t, uid)
					if err != nil {
						t.Fatal(err)
					}
					got := drive(t, in, uid, home2, proj2, session(t, in, uid, a.argv))
					if !reflect.DeepEqual(steps(got), steps(*direct)) {
						t.Errorf("through the session:\n %s\ndirectly:\n %s\nsession's stderr: %q", steps(got), steps(*direct), got.StderrTail)
					}
					if c := got.Exit.Code; c != nil && (*c == 124 || *c == 125 || *c == 127) && !eofCut(got, *direct) {
						t.Errorf("the session exited %d: %q", *c, got.StderrTail)
					}
				})
			}
		}
	}
}

// eofCut: loki-init's single-shot rule ended an agent that was still
// writing 1 s after stdin EOF (125 eof-cut-output), and the agent run
// directly did not exit after EOF either: claude-agent-acp and codex-acp
// wait for more input, and Claude Code's child still logs then.
func eofCut(got, direct transcript) bool {
	last := ""
	if n := len(got.StderrTail); n > 0 {
		last = got.StderrTail[n-1]
	}
	return *got.Exit.Code == 125 && strings.HasSuffix(last, "eof-cut-output") && direct.Exit.Killed != ""
}

func steps(tr transcript) string {
	var b []string
	for _, s := range tr.Steps {
		b = append(b, string(s))
	}
	return strings.Join(b, "\n ")
}
