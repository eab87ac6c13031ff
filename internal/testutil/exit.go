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

// WaitExit waits for a started cmd and returns its ExitCode; past bound
// it kills the command and fails the test.
func WaitExit(t testing.TB, cmd *exec.Cmd, bound time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return ExitCode(err)
	case <-time.After(bound):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not finish within %v", filepath.Base(cmd.Path), bound)
		return -1
	}
}
