//go:build unix

package direct

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// signalGroup signals the peer's process group. The peer is our unreaped
// child and leads that group, so the group id cannot have been reused.
func signalGroup(p *os.Process, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return p.Signal(sig)
	}
	if err := syscall.Kill(-p.Pid, s); err != nil {
		return p.Signal(sig)
	}
	return nil
}

// killGroup runs right after the leader was reaped: members left in the
// group still carry its id, and no new group can take that id while any
// member lives.
func killGroup(pgid int) { syscall.Kill(-pgid, syscall.SIGKILL) }
