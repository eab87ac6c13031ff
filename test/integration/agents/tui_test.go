//go:build linux

package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/testutil"
)

// tui is one agent's terminal UI: what its first screen shows without a
// login, a key that moves its selection (and what shows it moved), and
// how many C-c end it.
type tui struct {
	name   string
	argv   []string
	first  *regexp.Regexp
	key    string
	moved  *regexp.Regexp
	ctrlCs int
}

var tuis = []tui{
	// Claude Code checks its API at start and exits 1 saying so.
	{name: "claude", argv: []string{"claude"}, first: regexp.MustCompile(`Unable to connect to Anthropic services`)},
	{name: "gemini", argv: []string{"gemini"}, first: regexp.MustCompile(`Do you trust the files in this folder\?`),
		key: "Down", moved: regexp.MustCompile(`● 2\. Trust parent folder`), ctrlCs: 2},
	{name: "codex", argv: []string{"codex"}, first: regexp.MustCompile(`Choose how you want to use Codex`),
		key: "Down", moved: regexp.MustCompile(`> 2\. Sign in with Device Code`), ctrlCs: 1},
}

var exitLine = regexp.MustCompile(`(?m)^exit=(\d+)\s*$`)

// pane is a tmux server of the test's own running a shell as uid in dir.
type pane struct {
	t    *testing.T
	sock string
}

func newPane(t *testing.T, in install, uid int, home, dir string) *pane {
	t.Helper()
	testutil.RequireCommand(t, "tmux")
	bash := testutil.RequireCommand(t, "bash")
	sockDir, err := os.MkdirTemp("/var/tmp", "loki-tui-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	os.Chown(sockDir, uid, uid)
	p := &pane{t: t, sock: filepath.Join(sockDir, "s")}
	env := "env -i HOME=" + home + " PATH=" + filepath.Join(in.dir, "node_modules", ".bin") + ":" + filepath.Dir(in.node) + ":/usr/local/bin:/usr/bin:/bin TERM=xterm-256color COLORTERM=truecolor LANG=C.UTF-8 HISTFILE=/dev/null"
	if uid == 0 {
		env += " IS_SANDBOX=1"
	}
	cmd := testutil.TmuxCommand(p.sock, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "100", "-y", "30", "-c", dir, env+" "+bash+" --norc --noprofile")
	if uid != 0 {
		cmd.SysProcAttr = testutil.AsUser(uid)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	t.Cleanup(func() { testutil.TmuxCommand(p.sock, "kill-server").Run() })
	return p
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	return testutil.Tmux(p.t, p.sock, args...)
}

func (p *pane) screen() string { return p.tmux("capture-pane", "-p", "-t", "t") }

// waitFor waits (bounded) until the screen matches re, then until it
// holds still, and returns it.
func (p *pane) waitFor(re *regexp.Regexp) string {
	p.t.Helper()
	var s string
	if !testutil.WaitUntil(60*time.Second, func() bool { s = p.screen(); return re.MatchString(s) }) {
		p.t.Fatalf("screen never matched %q:\n%s", re, s)
	}
	testutil.WaitUntil(5*time.Second, func() bool {
		time.Sleep(300 * time.Millisecond) // a redraw still under way
		n := p.screen()
		same := n == s
		s = n
		return same
	})
	return s
}

// run types cmd, takes the agent through its first screen, a key and
// C-c, and returns the first screen (its lines with words in them,
// without trailing blanks) and the exit code.
func (p *pane) run(tu tui, home, cmd string) (string, int) {
	p.t.Helper()
	p.tmux("send-keys", "-t", "t", "clear; "+cmd+"; echo exit=$?", "Enter")
	first := normScreen(strings.ReplaceAll(p.waitFor(tu.first), filepath.Base(home), "<home>"))
	if tu.key != "" {
		p.tmux("send-keys", "-t", "t", tu.key)
		p.waitFor(tu.moved)
	}
	for i := 0; i < tu.ctrlCs; i++ {
		p.tmux("send-keys", "-t", "t", "C-c")
		time.Sleep(500 * time.Millisecond) // the TUI asks for a second C-c only after the first
	}
	code, _ := strconv.Atoi(exitLine.FindStringSubmatch(p.waitFor(exitLine))[1])
	return first, code
}

var word = regexp.MustCompile(`[A-Za-z]{3,}`)

func normScreen(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		// Runs of blanks as one: a box pads to the width of the
		// (random-length) HOME name in it.
		l = strings.Join(strings.Fields(l), " ")
		if word.MatchString(l) && !strings.Contains(l, "exit=") && !strings.Contains(l, "clear;") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestTUIs: claude, gemini and codex on a terminal under session -t, as
// root and as nobody with the project in a 0700 HOME, show the first
// screen a direct run shows, take a key, end on C-c, with the direct
// run's exit code. Before: gemini crashed before its first screen and
// Claude Code showed a blank screen and hung (its state unwritable), and
// as root the 0700 HOME failed at start.
func TestTUIs(t *testing.T) {
	in := setup(t)
	for _, uid := range []int{0, testutil.Nobody} {
		for _, tu := range tuis {
			t.Run(fmt.Sprintf("uid%d/%s", uid, tu.name), func(t *testing.T) {
				home, proj, err := layouts[0].make(t, uid)
				if err != nil {
					t.Fatal(err)
				}
				p := newPane(t, in, uid, home, proj)
				wantScreen, wantCode := p.run(tu, home, strings.Join(tu.argv, " "))
				home2, proj2, err := layouts[0].make(t, uid)
				if err != nil {
					t.Fatal(err)
				}
				p2 := newPane(t, in, uid, home2, proj2)
				s := session(t, in, uid, tu.argv)
				s = append(s[:len(s)-len(tu.argv)-1], append([]string{"-t", "--"}, tu.argv...)...)
				gotScreen, gotCode := p2.run(tu, home2, strings.Join(s, " "))
				if gotScreen != wantScreen {
					t.Errorf("first screen through the session:\n%s\ndirectly:\n%s", gotScreen, wantScreen)
				}
				if gotCode != wantCode {
					t.Errorf("exit %d through the session, %d directly:\n%s", gotCode, wantCode, p2.screen())
				}
			})
		}
	}
}
