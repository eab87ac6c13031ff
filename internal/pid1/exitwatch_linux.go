package pid1

import (
	"os"

	"golang.org/x/sys/unix"
)

// watchExit reports on exited once the peer has ended (its pidfd became
// readable), and never when the peer has no pidfd.
//
// SIGCHLD alone would do, but slowly: the signal lands on any thread, the
// runtime's handler wakes its signal thread, which wakes the os/signal
// goroutine, which wakes the event loop, and each hop is a cross-CPU
// wakeup (a third of a /bin/true session's time in the init). A pidfd
// waits in the runtime's poller, whose thread then runs the loop at once.
// Nothing is reaped here: the loop collects the peer (the only waiter in
// the process), and SIGCHLD still drives the reaping of orphans.
func watchExit(pidfd int, exited chan<- struct{}) {
	if pidfd < 0 {
		return
	}
	if unix.SetNonblock(pidfd, true) != nil {
		unix.Close(pidfd)
		return
	}
	f := os.NewFile(uintptr(pidfd), "peer-pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return
	}
	go func() {
		defer f.Close()
		waited := false
		// The first call asks the poller to wait; the second, made once
		// the pidfd is readable, ends the wait.
		if rc.Read(func(uintptr) bool { w := waited; waited = true; return w }) == nil {
			exited <- struct{}{}
		}
	}()
}
