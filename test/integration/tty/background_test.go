//go:build linux

package tty

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loki-sh/loki/internal/testutil"
)

// TestBackgroundSession: `loki-supervise session -- CMD &` in an
// interactive shell keeps the terminal as its stdin. It must not read it
// while in the background (a read would stop it with SIGTTIN, "Stopped
// (tty input)", and the stopped supervisor's lease would kill the agent
// at 5 s): the agent runs to its end and its code is the session's. Then
// the same session brought to the foreground with fg reads the terminal
// again: a line typed there reaches the agent. Before the fix, the first
// job was stopped at once and `wait` never saw its code.
func TestBackgroundSession(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequirePIDNamespace(t)
	p := newPane(t, 30, 200)
	sup := testutil.Binary(t, "loki-supervise")
	init := testutil.Binary(t, "loki-init")
	out := filepath.Join(p.dir, "out")
	base := "'" + sup + "' session --init '" + init + "' --lease-duration 2s --"

	// The lease is 2 s: a stopped supervisor would lose the agent at 2 s.
	p.line(base + " sh -c 'sleep 4; echo done; exit 3' >" + out + " 2>&1 &")
	got := p.mark("wait $!; echo rc=$?")
	b, _ := os.ReadFile(out)
	if !strings.HasSuffix(got, "rc=3") || string(b) != "done\n" {
		t.Fatalf("background session: shell said %q, output %q; want rc=3 and done", got, b)
	}

	// Backgrounded, then brought back: the agent reads what is typed.
	p.line(base + " sh -c 'read x; echo got:$x; exit 5' >" + out + " 2>&1 &")
	p.line("fg")
	p.waitFor(regexp.MustCompile(`host\$ fg\n.*session`))
	p.line("hello")
	// Nothing more is typed until the session is over: its relay would
	// read it.
	if !testutil.WaitUntil(wait, func() bool { b, _ := os.ReadFile(out); return strings.Contains(string(b), "got:") }) {
		t.Fatalf("the agent never read the line:\n%s", p.screen())
	}
	p.waitFor(regexp.MustCompile(`host\$ $`))
	got = p.mark("echo rc=$?")
	b, _ = os.ReadFile(out)
	if !strings.HasSuffix(got, "rc=5") || !strings.Contains(string(b), "got:hello") {
		t.Fatalf("foreground again: shell said %q, output %q; want rc=5 and got:hello", got, b)
	}
}
