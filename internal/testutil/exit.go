package testutil

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
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
