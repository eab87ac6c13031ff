//go:build linux

package tty

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

var (
	peerPrompt = regexp.MustCompile(`peer\$ $`)
	hostPrompt = regexp.MustCompile(`host\$ $`)
	exitLine   = regexp.MustCompile(`(?m)exit=(\d+)\s*$`)
)

// start runs the session in the host shell, between two `stty -a`
// snapshots of the host terminal, and prints its exit code afterwards.
func start(p *pane, cmdline string) (before, after string) {
	before = filepath.Join(p.dir, "stty.before")
	after = filepath.Join(p.dir, "stty.after")
	// No job control in the host shell: a test's SIGSTOP of the
	// supervisor must not make the shell take the terminal back.
	p.line("set +m; stty -a > " + before + "; " + cmdline + "; c=$?; stty -a > " + after + "; echo exit=$c")
	return before, after
}

// finished waits for the session's exit line and checks the host terminal
// is exactly as it was before the session.
func finished(t *testing.T, p *pane, before, after string) int {
	t.Helper()
	code, _ := strconv.Atoi(p.waitFor(exitLine)[1])
	p.waitFor(hostPrompt)
	b, _ := os.ReadFile(before)
	a, _ := os.ReadFile(after)
	if len(b) == 0 || string(a) != string(b) {
		t.Fatalf("host terminal not restored:\nbefore %s\nafter  %s", b, a)
	}
	return code
}

// TestInteractiveShell is a person's session: the peer's shell is on a
// pty of its own at the pane's size, follows a resize, is interrupted and
// suspended from the keyboard, and its exit code is the session's.
func TestInteractiveShell(t *testing.T) {
	for _, b := range rows() {
		t.Run(b.Name, func(t *testing.T) {
			p := newPane(t, 30, 100)
			before, after := start(p, session(t, p, b, nil))
			p.waitFor(peerPrompt)

			if got := p.mark("tty"); !regexp.MustCompile(`^/dev/pts/\d+$`).MatchString(got) {
				t.Fatalf("tty printed %q, want a pty", got)
			}
			if got, want := p.mark("stty size"), p.size(); got != want {
				t.Fatalf("stty size %q, pane %q", got, want)
			}
			p.resize(40, 120)
			if !testutil.WaitUntil(wait, func() bool { return p.mark("stty size") == "40 120" }) {
				t.Fatalf("stty size did not follow the resize to 40 120 (pane %s)", p.size())
			}
			p.resize(30, 100)
			if !testutil.WaitUntil(wait, func() bool { return p.mark("stty size") == "30 100" }) {
				t.Fatal("stty size did not follow the resize back")
			}

			// ^C interrupts the foreground job; the shell goes on.
			p.line("sleep 100")
			waitForeground(t, p, "sleep")
			p.keys("C-c")
			if got := p.mark("echo status=$?"); got != "status=130" {
				t.Fatalf("after ^C: %q, want status=130", got)
			}
			// ^Z stops it, fg resumes it in the foreground, ^C ends it.
			p.line("sleep 100")
			waitForeground(t, p, "sleep")
			p.keys("C-z")
			p.waitFor(regexp.MustCompile(`(?i)stopped`))
			p.line("fg")
			waitForeground(t, p, "sleep")
			p.keys("C-c")
			if got := p.mark("echo status=$?"); got != "status=130" {
				t.Fatalf("after fg and ^C: %q, want status=130", got)
			}
			// ^\ quits the foreground job with SIGQUIT.
			p.line("sleep 100")
			waitForeground(t, p, "sleep")
			p.keys(`C-\`)
			if got := p.mark("echo status=$?"); got != "status=131" {
				t.Fatalf("after ^\\: %q, want status=131", got)
			}

			p.line("exit 3")
			if code := finished(t, p, before, after); code != 3 {
				t.Fatalf("session exit %d, want 3", code)
			}
		})
	}
}

// waitForeground waits until a process named name runs under the pane
// (the job the peer's shell started), so a key sent next reaches it and
// not the shell's line editor.
func waitForeground(t *testing.T, p *pane, name string) {
	t.Helper()
	// Not stopped: after fg, the shell gives the job the terminal before
	// it sends SIGCONT.
	if !testutil.WaitUntil(wait, func() bool { pid, st := p.peerProc(name); return pid > 0 && st != 'T' }) {
		t.Fatalf("%s never started:\n%s", name, p.screen())
	}
}

// TestCursesProgram: a full-screen program draws and quits, and the
// session ends cleanly after it.
func TestCursesProgram(t *testing.T) {
	for _, b := range rows() {
		t.Run(b.Name, func(t *testing.T) {
			p := newPane(t, 24, 80)
			// The script lives in the workspace (--cwd), which the
			// confined filesystem shows the peer.
			var extra []string
			if b.Name == "namespace" {
				extra = []string{"--cwd", p.dir}
			}
			before, after := start(p, session(t, p, b, extra))
			p.waitFor(peerPrompt)
			if b.Name == "namespace" {
				py := peerCommand(t, "python3")
				prog := `import curses
def main(s):
    s.addstr(5, 10, "CURSES-DRAWN %dx%d" % s.getmaxyx())
    s.refresh()
    while s.getch() != ord("q"):
        pass
curses.wrapper(main)`
				file := filepath.Join(p.dir, "draw.py")
				if err := os.WriteFile(file, []byte(prog), 0o644); err != nil {
					t.Fatal(err)
				}
				p.line(py + " " + file)
				p.waitFor(regexp.MustCompile(`(?m)^ {10}CURSES-DRAWN 24x80`))
				p.keys("q")
			} else {
				p.line("vi /tmp/note")
				p.waitFor(regexp.MustCompile(`(?m)^~\s*\n.*/tmp/note`))
				p.keys("i")
				p.waitFor(regexp.MustCompile(`(?m)^I .*/tmp/note`))
				p.tmux("send-keys", "-t", "t", "-l", "hello from vi")
				p.waitFor(regexp.MustCompile(`(?m)^hello from vi`))
				p.keys("Escape")
				p.waitFor(regexp.MustCompile(`(?m)^- .*/tmp/note`))
				p.tmux("send-keys", "-t", "t", "-l", ":wq")
				p.keys("Enter")
			}
			p.waitFor(peerPrompt)
			if b.Name != "namespace" {
				if got := p.mark("cat /tmp/note"); got != "hello from vi" {
					t.Fatalf("vi wrote %q", got)
				}
			}
			p.line("exit 0")
			if code := finished(t, p, before, after); code != 0 {
				t.Fatalf("session exit %d, want 0", code)
			}
		})
	}
}

// TestWaysOut: the host terminal comes back sane whichever way the session
// ends, and the exit code is the one a session without a terminal gives.
func TestWaysOut(t *testing.T) {
	cases := []struct {
		name  string
		extra []string
		peer  []string
		end   func(t *testing.T, p *pane, b backend)
		want  int // -1: the backend's own code for a killed init (below)
	}{
		{"peer exits", nil, []string{"sh", "-c", "echo re\"a\"dy; exit 5"}, nil, 5},
		{"lease expires", []string{"--lease-duration", "2s", "--renew-interval", "200ms"}, []string{"sh", "-c", "echo re\"a\"dy; sleep 1000"},
			func(t *testing.T, p *pane, b backend) {
				var sup, sleeper int
				if !testutil.WaitUntil(wait, func() bool {
					sup = descendantNamed(p.shellPID(), "loki-supervise")
					sleeper, _ = p.peerProc("sleep")
					return sup > 0 && sleeper > 0
				}) {
					t.Fatalf("supervisor %d, sleep %d not found", sup, sleeper)
				}
				syscall.Kill(sup, syscall.SIGSTOP)
				defer syscall.Kill(sup, syscall.SIGCONT)
				if !testutil.WaitUntil(wait, func() bool { return gone(sleeper) }) {
					t.Fatal("the session outlived its lease")
				}
			}, 124},
		{"supervisor gets SIGTERM", nil, []string{"sh", "-c", "echo re\"a\"dy; exec sleep 1000"},
			func(t *testing.T, p *pane, b backend) {
				sup := descendantNamed(p.shellPID(), "loki-supervise")
				if sup == 0 {
					t.Fatal("supervisor not found")
				}
				syscall.Kill(sup, syscall.SIGTERM)
			}, 128 + 15},
		{"init is killed", nil, []string{"sh", "-c", "echo re\"a\"dy; exec sleep 1000"},
			func(t *testing.T, p *pane, b backend) {
				// The init is the parent of the tagged peer (its own
				// environment is empty): loki-init, or /.loki/init.
				var init int
				if !testutil.WaitUntil(wait, func() bool {
					peer, _ := p.peerProc("sleep")
					init = parentOf(peer)
					comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", init))
					c := strings.TrimSpace(string(comm))
					return peer > 0 && (c == "loki-init" || c == "init")
				}) {
					t.Fatal("loki-init not found")
				}
				syscall.Kill(init, syscall.SIGKILL)
			}, -1},
	}
	for _, b := range rows() {
		t.Run(b.Name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					p := newPane(t, 24, 80)
					before, after := start(p, session(t, p, b, tc.extra, tc.peer...))
					p.waitFor(regexp.MustCompile(`(?m)ready\s*$`))
					if tc.end != nil {
						tc.end(t, p, b)
					}
					want := tc.want
					if want < 0 {
						// As without a terminal: the namespace backend
						// sees its init die by SIGKILL (125); crun, runc
						// and docker report it as their own exit code 128+9.
						want = map[string]int{"namespace": 125, "oci-crun": 137, "oci-runc": 137, "docker": 137}[b.Name]
					}
					if code := finished(t, p, before, after); code != want {
						t.Fatalf("session exit %d, want %d:\n%s", code, want, p.screen())
					}
				})
			}
		})
	}
}

// TestLostOutput: a terminal session whose output cannot be delivered
// fails with 125, as without a terminal.
func TestLostOutput(t *testing.T) {
	for _, b := range rows() {
		t.Run(b.Name, func(t *testing.T) {
			p := newPane(t, 24, 80)
			cmd := session(t, p, b, nil, "sh", "-c", "sleep 1; while :; do echo y; done")
			p.line(cmd + " | true; echo exit=${PIPESTATUS[0]}")
			if code, _ := strconv.Atoi(p.waitFor(exitLine)[1]); code != 125 {
				t.Fatalf("exit %d with stdout closed, want 125", code)
			}
		})
	}
}
