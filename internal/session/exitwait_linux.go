package session

import (
	"os"

	"golang.org/x/sys/unix"
)

// AwaitExit returns once p has exited, without reaping it (its Wait does
// that, at once). It waits in the runtime's poller on a pidfd of its own
// (readable once the process exits), so no thread sits in a wait system
// call the whole session long: a goroutine blocked in one holds a P, and
// with the stdin relay blocked in splice holding the other, the scheduler
// took a P back from one of them on about every message the relay moved
// (sysmon polling every 20 µs, and a thread handoff when the relay
// returned). Where no pidfd can be had it returns at once, and Wait
// blocks as before.
func AwaitExit(p *os.Process) {
	fd, err := unix.PidfdOpen(p.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// The first call asks the poller to wait; the second, made once the
	// pidfd is readable, ends the wait.
	waited := false
	rc.Read(func(uintptr) bool { w := waited; waited = true; return w })
}
