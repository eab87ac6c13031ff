package oci

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// adoptWait bounds the wait for the runtime's pid file. loki-init ends
// the session itself (124) when no renewal comes within the lease.
const adoptWait = 60 * time.Second

// adopt moves the container's init, named by the runtime's pid file,
// into the session's cgroup. A runtime that exits first (it could not
// make the container) leaves nothing to adopt: Wait reports it.
func (p *process) adopt() error {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return err
	}
	defer unix.Close(in)
	// The runtimes write the pid file in place or rename it there.
	if _, err := unix.InotifyAddWatch(in, p.bundle, unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO); err != nil {
		return err
	}
	fds := []unix.PollFd{{Fd: int32(in), Events: unix.POLLIN}}
	// The runtime's own exit wakes the wait too. Opened before done is
	// looked at, so it is that process (unreaped until then).
	if rt, err := unix.PidfdOpen(p.cmd.Process.Pid, 0); err == nil {
		defer unix.Close(rt)
		fds = append(fds, unix.PollFd{Fd: int32(rt), Events: unix.POLLIN})
	}
	deadline := time.Now().Add(adoptWait)
	buf := make([]byte, 4096)
	for {
		if pid, ok := readPid(p.pidFile); ok {
			return p.cg.Adopt(pid, p.id)
		}
		select {
		case <-p.done:
			return nil
		default:
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%s wrote no pid file within %v", p.rt, adoptWait)
		}
		// The timeout only bounds the wait: a write or the runtime's
		// exit wakes it.
		if _, err := unix.Poll(fds, int(min(left, time.Second)/time.Millisecond)+1); err != nil && !errors.Is(err, unix.EINTR) {
			return err
		}
		for {
			if n, err := unix.Read(in, buf); n <= 0 || err != nil {
				break
			}
		}
	}
}
