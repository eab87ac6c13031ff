//go:build unix

package provider

import (
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// killGroupOnCancel runs cmd as the leader of a new process group and, if
// its context ends first, kills the whole group: a CLI's helpers must not
// outlive the probe or keep its stdout open.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return unix.Kill(-cmd.Process.Pid, unix.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
}
