//go:build unix

package seatbelt

import (
	"errors"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// killOwnGroup starts a shell with a background child in a new process
// group and kills the whole group, proving the profile lets a build signal
// what it started (and only that: the group is ours by construction).
func killOwnGroup(wait time.Duration) error {
	cmd := exec.Command("/bin/sh", "-c", "/bin/sleep 5 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	// Start returns after exec, so the child already leads its group.
	if err := unix.Kill(-cmd.Process.Pid, unix.SIGKILL); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return nil
	case <-time.After(wait):
		return errors.New("killed process group did not exit")
	}
}

// isPermission is the refusal a sandbox gives for a denied bind.
func isPermission(err error) bool {
	return errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}

// killGroupOnCancel puts cmd in its own process group and makes a cancelled
// context kill that whole group, so nothing the payload (or a provider CLI)
// started outlives a timeout. WaitDelay bounds the wait for output pipes a
// stray process might still hold.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return unix.Kill(-cmd.Process.Pid, unix.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
}
