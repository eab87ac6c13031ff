package testutil

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// ExitStatus is a finished process's code, 128+N for death by signal N
// (the shell's convention, which loki's own exit codes follow).
func ExitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// ExitCode is the code of the command that returned err from Run or Wait:
// 0 for nil, ExitStatus for an *exec.ExitError, -1 when it never ran.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ExitStatus(ee.ProcessState)
	}
	return -1
}

// Waiter waits in the background for a command the test started, so the
// test can act meanwhile and then take the command's end within a bound.
// It kills only that command, by its own process.
type Waiter struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Wait starts waiting for the started cmd.
func Wait(cmd *exec.Cmd) *Waiter {
	w := &Waiter{cmd: cmd, done: make(chan struct{})}
	go func() { w.err = cmd.Wait(); close(w.done) }()
	return w
}

// Done is closed once the command has ended and been reaped.
func (w *Waiter) Done() <-chan struct{} { return w.done }

// Err is cmd.Wait's answer; read it only after Done.
func (w *Waiter) Err() error { return w.err }

// Within waits up to bound for the command's end and returns its
// ExitCode and true; past bound it kills the command, reaps it and
// returns its ExitCode and false.
func (w *Waiter) Within(bound time.Duration) (int, bool) {
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case <-w.done:
		return ExitCode(w.err), true
	case <-timer.C:
		w.cmd.Process.Kill()
		<-w.done
		return ExitCode(w.err), false
	}
}

// Kill kills the command now (if it still runs) and reaps it.
func (w *Waiter) Kill() {
	w.cmd.Process.Kill()
	<-w.done
}

// WaitExit waits for a started cmd and returns its ExitCode; past bound
// it kills the command and fails the test.
func WaitExit(t testing.TB, cmd *exec.Cmd, bound time.Duration) int {
	t.Helper()
	code, ok := Wait(cmd).Within(bound)
	if !ok {
		t.Fatalf("%s did not finish within %v", filepath.Base(cmd.Path), bound)
	}
	return code
}
