package reap

import (
	"golang.org/x/sys/unix"
)

// New returns a reaper for this process's children.
func New() *Reaper { return &Reaper{w: sysWaiter{}, batch: DefaultBatch} }

type sysWaiter struct{}

func (sysWaiter) wait(pid int) (int, Status, bool, error) {
	var ws unix.WaitStatus
	for {
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ECHILD:
			return 0, Status{}, true, nil
		case err != nil:
			return 0, Status{}, false, err
		case got == 0:
			return 0, Status{}, false, nil
		}
		return got, statusOf(ws), false, nil
	}
}

func statusOf(ws unix.WaitStatus) Status {
	if ws.Signaled() {
		return Status{Signal: int(ws.Signal())}
	}
	return Status{Exited: true, Code: ws.ExitStatus()}
}
