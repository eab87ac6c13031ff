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
	// Each call asks the pidfd itself: the poller's readiness alone is
	// not enough, since a process that exited before the first wait
	// raised its one edge before the wait began, and the wait clears it.
	rc.Read(func(fd uintptr) bool {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 0)
		return err != nil && err != unix.EINTR || n > 0
	})
}
