package session

import (
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Pipe buffers (best effort; /proc/sys/fs/pipe-max-size bounds them for
// unprivileged users). The caller's stdin pipe, which we drain, gets the
// most, so its writer is throttled least; our own pipe to the init gets a
// quarter of that, which measured as fast and keeps the bytes in flight
// closer to the cache (bench/session.sh).
const (
	pipeSize     = 1 << 20
	initPipeSize = 256 << 10
)

// newStdinPipe makes the init's stdin: blocking descriptors, so the relay
// can sit in read(2) and splice(2) without the runtime's poller in
// between, with a buffer larger than the default 64 KiB. loki-init hands
// this pipe to the peer as its stdin, and the peer may reopen it through
// /proc/self/fd/0 (`cat /dev/stdin`): its inode lets the owner and group
// gid (the session's reader group; -1: none) read it and no one write it.
// A writer the peer held would keep the pipe from hanging up at host
// stdin's end, and so loki-init from its EOF rule.
func newStdinPipe(gid int) (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, fmt.Errorf("init stdin pipe: %w", err)
	}
	mode := uint32(0o400)
	if gid >= 0 && unix.Fchown(p[0], -1, gid) == nil {
		mode = 0o440
	}
	if err := unix.Fchmod(p[0], mode); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, nil, fmt.Errorf("init stdin pipe: %w", err)
	}
	unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, initPipeSize)
	return os.NewFile(uintptr(p[0]), "init-stdin"), os.NewFile(uintptr(p[1]), "init-stdin-w"), nil
}

// relayBuf is the relay's buffer: a message fits it whole; a read that
// fills it is a stream, and splice takes over.
const relayBuf = 64 << 10

// relayStdin moves src to dst (our blocking pipe) in blocking system calls,
// with no goroutine handoff. A message is one read and one write: a write
// wakes only the pipe's reader, where a splice wakes every poller of the
// pipe too, and loki-init polls it for its writer's hang-up (a thread
// switch more per message). A read that fills the buffer is a stream:
// splice(2) then moves it, zero copy, up to 1 MiB per call, until a splice
// moves less than the buffer holds. A terminal, or a source left
// non-blocking (EAGAIN), takes the runtime's copy; a read or splice that
// fails moves nothing, so switching neither loses nor repeats a byte.
func relayStdin(dst, src *os.File, moved *atomic.Int64) error {
	sfd, ok := rawFD(src)
	if !ok || isTerminal(src) {
		return copyFallback(dst, src, moved)
	}
	dfd := int(dst.Fd())
	growPipe(sfd)
	splice := spliceable(sfd)
	stream := false
	buf := heapBuf()
	for {
		var n int64
		var err error
		if stream {
			n, err = unix.Splice(sfd, nil, dfd, nil, pipeSize, unix.SPLICE_F_MOVE)
			if err == unix.EINVAL || err == unix.ENOSYS {
				splice, stream = false, false
				continue
			}
		} else {
			var k int
			k, err = unix.Read(sfd, buf)
			if err == nil && k > 0 {
				if werr := writeFull(dfd, buf[:k]); werr != nil {
					return fmt.Errorf("relay stdin: %w", werr)
				}
			}
			n = int64(k)
		}
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return copyFallback(dst, src, moved)
		case err != nil:
			return fmt.Errorf("relay stdin: %w", err)
		case n == 0:
			return nil
		}
		moved.Add(n)
		stream = splice && n >= relayBuf
	}
}

// heapBuf is relayStdin's buffer, on the heap: on the goroutine's stack
// (where the compiler puts a buffer this size that does not escape) it
// would be zeroed before the first read, 16 fresh pages touched even when
// stdin is empty; fresh heap memory is touched only where reads fill it.
//
//go:noinline
func heapBuf() []byte { return make([]byte, relayBuf) }

// writeFull writes all of b to the blocking descriptor fd.
func writeFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// spliceable reports whether splicing from fd is safe: from a pipe or a
// regular file it is. A blocking splice from a socket (what Node.js's
// child_process gives a child as stdin) waits for more socket data while it
// holds the lock of the init's pipe, so the init could not read the bytes
// already there — an ACP request would get no answer until the client
// closed its end.
func spliceable(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	m := st.Mode & unix.S_IFMT
	return m == unix.S_IFIFO || m == unix.S_IFREG
}

// rawFD returns f's descriptor without changing its blocking mode (Fd
// would make the caller's shared descriptor blocking).
func rawFD(f *os.File) (int, bool) {
	sc, err := f.SyscallConn()
	if err != nil {
		return -1, false
	}
	fd := -1
	if err := sc.Control(func(u uintptr) { fd = int(u) }); err != nil {
		return -1, false
	}
	return fd, fd >= 0
}

// growPipe enlarges fd's buffer when fd is a pipe (best effort: the limit
// for unprivileged users may refuse it, which only costs speed).
func growPipe(fd int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO {
		unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, pipeSize)
	}
}

// unread is the number of bytes in the pipe fd that nobody has read yet.
func unread(f *os.File) (int, error) {
	return unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ) // FIONREAD
}

// dupFile duplicates f's descriptor (close-on-exec).
func dupFile(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()+"-kept"), nil
}

// shareFIFOs lets group gid read and write the pipes among files: the
// client's pipes handed to a peer that runs with other ids (--user, a
// private user namespace) are its stdio, and a pipe is reopened through
// /proc/self/fd (echo >/dev/stderr, tee /dev/stdout) only with the
// inode's permission. Only a holder of the pipe reaches it there. Best
// effort: without it, the peer's writes to the descriptors still work.
func shareFIFOs(gid int, files ...*os.File) {
	for _, f := range files {
		fd, ok := rawFD(f)
		var st unix.Stat_t
		if !ok || unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			continue
		}
		if int(st.Gid) != gid {
			unix.Fchown(fd, -1, gid)
		}
		unix.Fchmod(fd, st.Mode&0o777|0o060)
	}
}

// directStdio reports whether the client's descriptors can be handed to
// the peer: pipes or sockets, whose ends loki-init can watch (a hang-up
// on stdin, a vanished reader on stdout/stderr). Terminals, files and
// /dev/null keep the relay.
func directStdio(files ...*os.File) bool {
	for _, f := range files {
		if f == nil {
			return false
		}
		fd, ok := rawFD(f)
		if !ok {
			return false
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			return false
		}
		if m := st.Mode & unix.S_IFMT; m != unix.S_IFIFO && m != unix.S_IFSOCK {
			return false
		}
	}
	return true
}
