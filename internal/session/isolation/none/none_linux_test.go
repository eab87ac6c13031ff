package none

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/proc/lineage"
	"github.com/loki-sh/loki/internal/proc/procid"
	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/testutil"
)

// The exec gate is this test binary re-executed: it must run first.
func TestMain(m *testing.M) {
	lineage.MaybeRunGate()
	os.Exit(m.Run())
}

func start(t *testing.T, script string, stdout *os.File) session.Process {
	t.Helper()
	p, err := Backend{}.Start(session.Request{
		Peer:   launch.Spec{Argv: []string{"/bin/sh", "-c", script}, Cwd: "/", Env: map[string]string{"PATH": "/usr/bin:/bin"}},
		Stdout: stdout, Stderr: os.Stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitBounded waits for p's exit, failing the test after a generous bound.
func waitBounded(t *testing.T, p session.Process) session.Exit {
	t.Helper()
	done := make(chan session.Exit, 1)
	go func() { done <- p.Wait() }()
	select {
	case e := <-done:
		return e
	case <-time.After(60 * time.Second):
		p.Kill()
		t.Fatal("the peer did not end within 60s")
		return session.Exit{}
	}
}

// TestExit: the peer's code and terminating signal come back as they are.
func TestExit(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   session.Exit
	}{
		{"code", "exit 7", session.Exit{Code: 7}},
		{"signal", "kill -9 $$", session.Exit{Signal: 9}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, tc.script, os.Stdout)
			got := waitBounded(t, p)
			p.Close()
			if got.Code != tc.want.Code || got.Signal != tc.want.Signal || got.Err != nil || got.Escaped != nil {
				t.Fatalf("Wait = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestEscapedDescendantKilled: a double-forked, setsid'd sleeper is not
// in the peer's group or session, and is still gone when Wait returns.
func TestEscapedDescendantKilled(t *testing.T) {
	testutil.RequireCommand(t, "setsid")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := start(t, `(setsid sh -c 'sleep 1000 </dev/null >/dev/null 2>&1 & echo $!'); exit 4`, w)
	w.Close()
	line, _ := bufio.NewReader(r).ReadString('\n')
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("peer printed %q", line)
	}
	// Nothing is stopped before Wait: the sleeper must be alive here.
	id, err := procid.Capture(pid)
	if err != nil {
		t.Fatalf("sleeper %d not alive before Wait: %v (test is blind)", pid, err)
	}
	got := waitBounded(t, p)
	p.Close()
	if id.Matches() {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("escaped sleeper %d survived the session", pid)
	}
	if got.Code != 4 || got.Escaped != nil {
		t.Fatalf("Wait = %+v, want the peer's code 4 and a contained lineage", got)
	}
}
