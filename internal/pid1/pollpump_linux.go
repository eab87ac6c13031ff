package pid1

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Why a second pump: a forwarder blocked in splice(2) is a goroutine in a
// blocking system call, and Go's scheduler reacts to every one of those
// with sysmon wakeups and P handoffs that preempt the peer (figures in
// docs/loki-init.md). pumpPolled instead parks the forwarder in the
// runtime's poller while the peer's pipe is empty, and moves data with
// non-blocking splices issued as raw system calls (they return at once, so
// the scheduler need not know about them): the only wakeup left is the
// poller's, once per batch the peer wrote.

// spliceBatch is how many splices one wakeup may run before yielding, so a
// producer as fast as the forwarder cannot keep the loop from its timers.
const spliceBatch = 16

// batchAfter is how much output a forwarder moves before the init's
// threads go SCHED_BATCH (batchProcess): a stream, not a short answer.
// Switching costs a /proc scan and a system call per thread, which a peer
// that prints a line and exits would otherwise wait for.
const batchAfter = 1 << 20

// pumpPolled forwards the peer's output pipe src into dst. It needs src to
// be the init's own end (its file description is made non-blocking, which
// no other process holds). Into a pipe it moves data with non-blocking
// splices (SPLICE_F_NONBLOCK makes the splice non-blocking on dst too,
// without touching the host's file flags); into anything else with
// moves the scheduler is told about, since dst may block them (moverFor).
// ok is false when the poller cannot take src; nothing was moved then,
// and pump is the fallback (it handles a source left non-blocking).
func pumpPolled(dst, src int, meter *meter) (eof bool, err error, ok bool) {
	// The poller gets a duplicate: the loop keeps the peer's descriptor
	// until the init exits, and an os.File closes what it holds.
	dup, derr := unix.FcntlInt(uintptr(src), unix.F_DUPFD_CLOEXEC, 3)
	if derr != nil {
		return false, nil, false
	}
	if unix.SetNonblock(dup, true) != nil {
		unix.Close(dup)
		return false, nil, false
	}
	f := os.NewFile(uintptr(dup), "peer-output")
	defer f.Close()
	rc, rerr := f.SyscallConn()
	if rerr != nil {
		return false, nil, false
	}
	var moved int64
	move := moverFor(dst)
	for {
		var done bool
		// Returning false parks the goroutine until src is readable; a
		// write landing between the last splice and the park still wakes
		// it (the poller is edge-triggered and remembers the edge).
		rerr := rc.Read(func(fd uintptr) bool {
			var n int64
			n, done, eof, err = moveSome(move, dst, int(fd), meter)
			if moved < batchAfter && moved+n >= batchAfter {
				batchProcess()
			}
			moved += n
			return done || eof || err != nil
		})
		switch {
		case rerr != nil:
			return false, rerr, true
		case err != nil || eof:
			return eof, err, true
		case done:
			runtime.Gosched()
		}
	}
}

// moveSome runs up to spliceBatch moves from src to dst and says how many bytes they moved. done reports a full batch (more may
// be waiting); otherwise src ran dry (the caller parks until it is
// readable) or the stream ended. Each splice is counted on m as it
// returns, not after the batch: the host may act on its bytes at once.
func moveSome(move mover, dst, src int, m *meter) (moved int64, done, eof bool, err error) {
	for i := 0; i < spliceBatch; i++ {
		m.start()
		n, errno := move(dst, src)
		m.end(int64(max(n, 0)))
		switch {
		case errno == unix.EINTR:
			continue
		case errno == unix.EAGAIN:
			// Either side may be why; by now the other may have moved
			// too. Only an empty src may park on src: a full src whose
			// writer is blocked sends no new edge, so taking a dst that
			// made room since the splice for "src is empty" would stall
			// the stream for good (seen: 2 of 32 soak sessions, with
			// host stdin forwarded by this pump too).
			if !pollNow(src, unix.POLLIN) {
				return moved, false, false, nil // src is empty
			}
			if writable(dst) {
				continue // dst made room since the splice: try again
			}
			// dst is full: the host reads slower than the peer writes.
			// Waiting for it blocks this thread, and the scheduler is
			// told (waitFD is an ordinary system call).
			if err := waitFD(dst, unix.POLLOUT); err != nil {
				return moved, false, false, err
			}
		case errno != 0:
			return moved, false, false, errno
		case n == 0:
			return moved, false, true, nil
		default:
			moved += int64(n)
		}
	}
	return moved, true, false, nil
}

// mover is one move of up to chunk bytes from src, non-blocking, to dst:
// EAGAIN when src is empty (or dst is a full pipe or socket), 0 at src's
// end.
type mover func(dst, src int) (int, syscall.Errno)

// moverFor picks how to move into dst. A pipe takes rawSplice. Anything
// else may block a move (a terminal under flow control, a file on a slow
// disk), so its moves are system calls the scheduler is told about, and a
// thread is held only while one blocks, not while the peer is quiet: a
// regular file (or block device) takes read and write (positioned, in
// forward_linux.go), others a splice (the kernel makes it non-blocking on a
// socket too, src being non-blocking) until one is refused, then read and
// write.
func moverFor(dst int) mover {
	if isPipe(dst) {
		return rawSplice
	}
	var buf []byte
	copyOnce := func(dst, src int) (int, syscall.Errno) {
		if buf == nil {
			buf = make([]byte, 64<<10)
		}
		n, err := unix.Read(src, buf)
		if err != nil || n <= 0 {
			return n, errnoOf(err)
		}
		if err := writeAll(dst, buf[:n]); err != nil {
			return -1, errnoOf(err)
		}
		return n, 0
	}
	if positioned(dst) {
		return copyOnce
	}
	spliced := true
	return func(dst, src int) (int, syscall.Errno) {
		if spliced {
			n, err := unix.Splice(src, nil, dst, nil, chunk, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
			if err != unix.EINVAL && err != unix.ENOSYS {
				return int(n), errnoOf(err)
			}
			spliced = false // refused: nothing was moved
		}
		return copyOnce(dst, src)
	}
}

// errnoOf is err as an errno; an error that is none (a short write) is
// EIO.
func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EIO
}

// rawSplice is one non-blocking splice of up to chunk bytes. It is a raw
// system call: with both ends non-blocking it returns at once (at most it
// waits for a pipe's mutex while the other side copies), so entering the
// scheduler's syscall state would only wake sysmon.
func rawSplice(dst, src int) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall6(unix.SYS_SPLICE, uintptr(src), 0, uintptr(dst), 0,
		chunk, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
	return int(n), errno
}

// writable reports whether dst has room (or an error or hangup, which the
// next splice reports as such).
func writable(fd int) bool {
	return pollNow(fd, unix.POLLOUT)
}

// pollNow is a zero-timeout ppoll, raw for the same reason as rawSplice.
func pollNow(fd int, events int16) bool {
	fds := [1]unix.PollFd{{Fd: int32(fd), Events: events}}
	var zero unix.Timespec
	n, _, errno := syscall.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1,
		uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	return errno == 0 && n > 0 && fds[0].Revents != 0
}

// batchProcess puts every thread of the init under SCHED_BATCH (threads the
// runtime starts later inherit it from the thread that clones them). Any
// thread may be the one the poller wakes for the peer's next write, and a
// batch thread does not preempt the task that woke it: a peer sharing a
// CPU with the init keeps writing until its slice ends or its pipe is
// full, and one wakeup then moves a batch, instead of the init cutting in
// after every 4 KiB write. It runs only after the peer was spawned (a
// child inherits its parent's policy, and the init forks nothing after
// that), once a forwarder moved batchAfter bytes, once however many
// forwarders get there.
//
// The thread ids come from /proc, so they are used only when that /proc is
// the init's own PID namespace's (its "self" is the init's own PID): a
// /proc mounted for the host would list host thread ids, and the policy
// would land on other processes.
var batchProcess = sync.OnceFunc(func() {
	if self, err := os.Readlink("/proc/self"); err != nil || self != strconv.Itoa(os.Getpid()) {
		return
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_BATCH}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			unix.SchedSetAttr(tid, &attr, 0) // best effort
		}
	}
})
