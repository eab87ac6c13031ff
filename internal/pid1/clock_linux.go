package pid1

import (
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// newCheckClock returns a timer on a timerfd read through the runtime's
// poller, or a runtime timer when timerfd is unavailable. An idle init has
// no runtime timer pending then: the runtime's sysmon thread sleeps for
// its full minute instead of waking at every check, and the expiry is one
// wakeup of the poller thread (a runtime timer costs several: the poller
// wakes up to a millisecond early and sleeps again while sysmon spins).
func newCheckClock(d time.Duration) checkClock {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return runtimeClock{time.NewTimer(d)}
	}
	c := &fdClock{fd: fd, c: make(chan time.Time, 1)}
	f := os.NewFile(uintptr(fd), "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return runtimeClock{time.NewTimer(d)}
	}
	c.Reset(d)
	go func() {
		var buf [8]byte
		for {
			if _, err := readRaw(rc, buf[:]); err != nil {
				return
			}
			select {
			case c.c <- time.Now():
			default: // one pending fire is enough: the check re-reads
			}
		}
	}()
	return c
}

type fdClock struct {
	fd int
	c  chan time.Time
}

func (c *fdClock) C() <-chan time.Time { return c.c }

// Move re-arms the timer: a raw timerfd_settime wakes nothing.
func (c *fdClock) Move(d time.Duration) { c.Reset(d) }

// Reset arms the timer d from now with a raw system call (an ordinary one
// would wake sysmon). A fire already queued is harmless: the guard's
// check only re-reads the lease.
func (c *fdClock) Reset(d time.Duration) {
	if d <= 0 {
		d = 1 // zero would disarm the timer
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(c.fd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
}
