package pid1

import (
	"errors"
	"runtime"

	"golang.org/x/sys/unix"
)

// stream names a forwarded direction.
type stream int

const (
	streamIn stream = iota
	streamOut
	streamErr
)

// forwarded is the end of one forwarder.
type forwarded struct {
	s   stream
	eof bool // the source reached end of file (as opposed to an error)
	err error
}

// forward copies src to dst until src ends or either side fails, then
// reports once on done. It runs on its own goroutine; an idle stream costs
// no wakeups (it is parked in the poller, or blocked in the kernel). Peer
// output takes the poller-driven pump (pollpump_linux.go).
func forward(s stream, dst, src int, done chan<- forwarded) {
	moved := meterOf(s)
	if s != streamIn {
		if eof, err, ok := pumpPolled(dst, src, moved); ok {
			done <- forwarded{s: s, eof: eof, err: err}
			return
		}
	}
	if s != streamIn {
		batchThread()
	}
	var eof bool
	var err error
	if positioned(dst) {
		eof, err = copyLoop(dst, src, moved)
	} else {
		eof, err = pump(dst, src, moved)
	}
	done <- forwarded{s: s, eof: eof, err: err}
}

// meterOf is the meter that counts stream s.
func meterOf(s stream) *meter {
	switch s {
	case streamIn:
		return &inMeter
	case streamErr:
		return &errMeter
	}
	return &outMeter
}

func isPipe(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO
}

// positioned reports whether fd writes at a file offset (a regular file or
// a block device). Such a destination takes write(2), never splice: a
// splice into a file reads the shared offset when it starts, then waits
// in the peer's pipe, and writes at that stale offset when data comes, and
// it takes no lock on the offset either. With stdout and stderr sharing
// one description (`> log 2>&1`) the two forwarders, and the supervisor's
// own notes, then overwrote each other's lines. write(2) takes the
// description's position lock and reads the offset as it writes.
func positioned(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	m := st.Mode & unix.S_IFMT
	return m == unix.S_IFREG || m == unix.S_IFBLK
}

// batchThread gives the calling goroutine a thread of its own under
// SCHED_BATCH. A batch thread does not preempt the task that woke it: when
// the peer shares a CPU with the init (taskset, a one-CPU container), the
// peer keeps writing until its pipe is full or its slice ends, and the
// forwarder then moves up to a pipe's worth in one splice, instead of
// waking for every 4 KiB write and bouncing the CPU between the two. The
// thread is never given back to other goroutines (it exits with this one),
// and the policy is reset on fork, so nothing else runs under it.
func batchThread() {
	runtime.LockOSThread()
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_BATCH, Flags: unix.SCHED_FLAG_RESET_ON_FORK}
	unix.SchedSetAttr(0, &attr, 0) // best effort: a refusal keeps SCHED_OTHER
}

// chunk is the most one splice or read moves (the enlarged pipe size).
const chunk = 1 << 20

// pump moves bytes with splice when one side is a pipe (zero copy), and
// falls back to read/write where splice does not apply (EINVAL: e.g. an
// O_APPEND file) or a descriptor is non-blocking (EAGAIN). A failed splice
// moves nothing, so falling back mid-stream loses and repeats no byte.
// It waits for data before a splice, so that only the move itself is
// under way on the meter.
func pump(dst, src int, moved *meter) (eof bool, err error) {
	for {
		if err := waitFD(src, unix.POLLIN); err != nil {
			return false, err
		}
		moved.start()
		n, err := unix.Splice(src, nil, dst, nil, chunk, unix.SPLICE_F_MOVE)
		moved.end(int64(max(n, 0)))
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EINVAL || err == unix.EAGAIN || err == unix.ENOSYS:
			return copyLoop(dst, src, moved)
		case err != nil:
			return false, err
		case n == 0:
			return true, nil
		}
	}
}

// copyLoop reads, then writes what it read: the bytes are the host's from
// the write on, so only the write is under way on the meter.
func copyLoop(dst, src int, moved *meter) (bool, error) {
	buf := make([]byte, 64<<10)
	for {
		n, err := readSome(src, buf)
		if err != nil {
			return false, err
		}
		if n == 0 {
			return true, nil
		}
		moved.start()
		if err := writeAll(dst, buf[:n]); err != nil {
			moved.end(0)
			return false, err
		}
		moved.end(int64(n))
	}
}

// readSome is one read that waits out EINTR and EAGAIN (a descriptor the
// host left non-blocking), returning 0 only at end of file.
func readSome(fd int, buf []byte) (int, error) {
	for {
		n, err := unix.Read(fd, buf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if err := waitFD(fd, unix.POLLIN); err != nil {
				return 0, err
			}
			continue
		case err != nil:
			return 0, err
		}
		return n, nil
	}
}

var errShortWrite = errors.New("short write")

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if err := waitFD(fd, unix.POLLOUT); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		case n <= 0:
			return errShortWrite
		}
		b = b[n:]
	}
	return nil
}

// waitFD blocks until fd is ready for events (or reports an error/hangup,
// which the next read or write turns into its own result).
func waitFD(fd int, events int16) error {
	fds := []unix.PollFd{{Fd: int32(fd), Events: events}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		return err
	}
}
