package procid

import (
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// spawnLeader starts `sleep` as a session leader with a pidfd, like the
// supervisor's runner, and returns its recorded group.
func spawnLeader(t *testing.T) (*exec.Cmd, Group) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	pid := cmd.Process.Pid
	tok, err := BirthToken(pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, Group{PID: pid, PGID: pid, SID: pid, Token: tok}
}

func TestGroupVerifyRefusals(t *testing.T) {
	_, g := spawnLeader(t)
	if err := g.Verify(); err != nil {
		t.Fatalf("Verify of the real group: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(*Group)
	}{
		{"other birth token", func(g *Group) { g.Token = g.Token + "1" }},
		{"imprecise ps token", func(g *Group) { g.Token = "ps:Wed Dec  2 18:00:00 2026" }},
		{"empty token", func(g *Group) { g.Token = "" }},
		{"pgid differs from pid", func(g *Group) { g.PGID = g.PID + 1 }},
		{"sid differs from pid", func(g *Group) { g.SID = g.PID + 1 }},
		{"pid 1", func(g *Group) { g.PID, g.PGID, g.SID = 1, 1, 1 }},
		{"recorded ids consistent but not a leader", func(g *Group) {
			self := syscall.Getpid()
			g.PID, g.PGID, g.SID = self, self, self
			g.Token, _ = BirthToken(self)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := g
			tc.mutate(&bad)
			if err := bad.Verify(); !errors.Is(err, ErrGroupRefused) {
				t.Fatalf("Verify = %v, want ErrGroupRefused", err)
			}
			if err := bad.Signal(syscall.SIGTERM); !errors.Is(err, ErrGroupRefused) {
				t.Fatalf("Signal = %v, want ErrGroupRefused", err)
			}
			if got := ErrGroupRefused.Error(); got != "Runner group identity changed or is imprecise; signal refused" {
				t.Fatalf("refusal text %q", got)
			}
		})
	}
	// None of the refused signals reached the process.
	if err := g.Verify(); err != nil {
		t.Fatalf("process was disturbed by a refused signal: %v", err)
	}
}

func TestGroupSignalReachesLeader(t *testing.T) {
	for _, withHold := range []bool{true, false} {
		name := map[bool]string{true: "held", false: "pgid only"}[withHold]
		t.Run(name, func(t *testing.T) {
			cmd, g := spawnLeader(t)
			var mu sync.Mutex
			reaped := false
			if withHold {
				g.Hold = func() (func(), bool) { mu.Lock(); return mu.Unlock, !reaped }
			}
			if err := g.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { err := cmd.Wait(); mu.Lock(); reaped = true; mu.Unlock(); done <- err }()
			select {
			case err := <-done:
				ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
				if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
					t.Fatalf("leader ended with %v (%v), want SIGTERM", ws, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("leader did not die within 30s of SIGTERM")
			}
			// A dead, reaped leader is refused, never signalled by pid.
			if err := g.Signal(syscall.SIGKILL); !errors.Is(err, ErrGroupRefused) {
				t.Fatalf("signal to a dead group = %v, want ErrGroupRefused", err)
			}
		})
	}
}

func TestSignalErrorText(t *testing.T) {
	for errno, want := range map[syscall.Errno]string{
		syscall.EPERM:  "Runner group signal failed: PermissionError",
		syscall.EINVAL: "Runner group signal failed: OSError",
		syscall.ENOENT: "Runner group signal failed: FileNotFoundError",
		syscall.EINTR:  "Runner group signal failed: InterruptedError",
	} {
		if got := (&SignalError{Errno: errno}).Error(); got != want {
			t.Errorf("%v: %q, want %q", errno, got, want)
		}
	}
}
