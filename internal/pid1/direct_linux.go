package pid1

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/pid1/procio"
)

// Direct stdio (Config.StdinFD > 0): the host handed the init its
// client's own descriptors, stdin as StdinFD and stdout/stderr as fd 1/2,
// and the peer gets them as its stdio, so a message crosses no forwarder.
// The outcomes the forwarders used to observe are observed on the
// descriptors instead:
//   - host stdin EOF: the client closed its end (POLLHUP, or POLLRDHUP for
//     a socket) starts the same single-shot window as an EOF read;
//   - lost output: a stdout or stderr whose reader went away (POLLERR,
//     POLLHUP) ends the run with 125 at once, and at completion;
//   - output cut by the single-shot rule: whether the session was still
//     writing in the window after host stdin EOF is told by the write
//     counters (/proc/PID/task/TID/io wchar) of the namespace's processes
//     that hold the host's stdout or stderr: any write by one of them
//     counts, even to a file, and so does one exiting (fail closed);
//   - held output: once the peer exited, no other process of the
//     namespace may still hold stdout or stderr (a /proc scan); one that
//     does past the completion window is 125, as for pipes.

// watchDirect reports host stdin EOF (once) and a vanished output reader
// on done. With no outs it only watches stdin, and stops once it reported
// it. The descriptors are shared with the peer (or the host), so they stay
// blocking and out of the runtime's poller, whose edge-triggered EPOLLIN
// would wake the init for every write into stdin. Instead an epoll set of
// the init's own asks for the hang-ups only (EPOLLRDHUP, and EPOLLERR and
// EPOLLHUP, which are always reported), and that set waits in the
// runtime's poller: it becomes readable only when one of them happened,
// and an idle watch keeps no thread. A descriptor epoll refuses (a
// regular file, /dev/null) falls back to one blocking poll on a goroutine
// of its own.
func watchDirect(stdin int, outs []int, done chan<- forwarded) {
	if rc, f, ok := hangupSet(stdin, outs); ok {
		go func() {
			defer f.Close()
			waitHangups(rc, stdin, outs, done)
		}()
		return
	}
	go pollDirect(stdin, outs, done)
}

// hangupSet is the epoll set of watchDirect, on the runtime's poller.
func hangupSet(stdin int, outs []int) (syscall.RawConn, *os.File, bool) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, nil, false
	}
	// One-shot: a reported hang-up is reported once and never queued again (a level
	// re-queued item would wake the runtime's poller after every wait).
	add := func(fd int, events uint32) bool {
		ev := unix.EpollEvent{Events: events | unix.EPOLLONESHOT, Fd: int32(fd)}
		return unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev) == nil
	}
	ok := add(stdin, unix.EPOLLRDHUP)
	for _, fd := range outs {
		ok = ok && add(fd, 0)
	}
	if !ok || unix.SetNonblock(ep, true) != nil {
		unix.Close(ep)
		return nil, nil, false
	}
	f := os.NewFile(uintptr(ep), "hangups")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, nil, false
	}
	return rc, f, true
}

// waitHangups parks until the set reports a hang-up, and reports it as
// watchDirect does. A wake with nothing to report (a key-less wakeup of a
// descriptor's queue) parks again.
func waitHangups(rc syscall.RawConn, stdin int, outs []int, done chan<- forwarded) {
	evs := make([]unix.EpollEvent, 1+len(outs))
	for {
		var n int
		var werr error
		err := rc.Read(func(ep uintptr) bool {
			n, werr = unix.EpollWait(int(ep), evs, 0)
			return (werr != nil && werr != unix.EINTR) || n > 0
		})
		if err != nil || werr != nil {
			return
		}
		for _, ev := range evs[:n] {
			if int(ev.Fd) == stdin {
				done <- forwarded{s: streamIn, eof: true}
				if len(outs) == 0 {
					return
				}
				continue
			}
			if ev.Events&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				done <- forwarded{s: streamOut, err: unix.EPIPE}
				return
			}
		}
	}
}

// pollDirect is watchDirect in one blocking poll.
func pollDirect(stdin int, outs []int, done chan<- forwarded) {
	fds := []unix.PollFd{{Fd: int32(stdin), Events: unix.POLLRDHUP}}
	for _, fd := range outs {
		fds = append(fds, unix.PollFd{Fd: int32(fd)}) // POLLERR and POLLHUP are always reported
	}
	for {
		_, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		if fds[0].Fd >= 0 && fds[0].Revents != 0 {
			fds[0].Fd = -1 // reported once; poll skips negative fds
			done <- forwarded{s: streamIn, eof: true}
			if len(outs) == 0 {
				return
			}
		}
		for _, f := range fds[1:] {
			if f.Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
				done <- forwarded{s: streamOut, err: unix.EPIPE}
				return
			}
		}
	}
}

// outputs are the descriptors the peer writes to the host through.
func outputs(stderr bool) []int {
	if stderr {
		return []int{1, 2}
	}
	return []int{1}
}

// outputGone reports whether the reader of a direct output went away.
func outputGone(stderr bool) bool {
	for _, fd := range outputs(stderr) {
		fds := []unix.PollFd{{Fd: int32(fd)}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
			return true
		}
	}
	return false
}

// outputHeld reports whether a process of the namespace other than the
// init still holds the host's stdout or stderr. Where /proc is not this
// namespace's own nothing can be proven, and the output counts as held.
func outputHeld(stderr bool) bool {
	want, ok := outputIDs(stderr)
	if !ok {
		return true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 1 && holds(e.Name(), want) {
			return true
		}
	}
	return false
}

// outputIDs are the host outputs' identities; ok is false where /proc is
// not this namespace's own (then nothing about its processes is proven).
func outputIDs(stderr bool) ([]unix.Stat_t, bool) {
	if self, err := os.Readlink("/proc/self"); err != nil || self != "1" {
		return nil, false
	}
	outs := outputs(stderr)
	want := make([]unix.Stat_t, len(outs))
	for i, fd := range outs {
		if unix.Fstat(fd, &want[i]) != nil {
			return nil, false
		}
	}
	return want, true
}

// holds reports whether process pid has one of want open.
func holds(pid string, want []unix.Stat_t) bool {
	dir := "/proc/" + pid + "/fd/"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false // gone, or a zombie: holds nothing
	}
	for _, f := range fds {
		var st unix.Stat_t
		if unix.Stat(dir+f.Name(), &st) != nil {
			continue
		}
		for i := range want {
			if st.Dev == want[i].Dev && st.Ino == want[i].Ino {
				return true
			}
		}
	}
	return false
}

// sessionWrites sums the bytes written (wchar) by the threads of the
// namespace's processes that hold the host's stdout or stderr, the only
// ones whose writes can be output: not the init, whose runtime writes to
// its own eventfd, nor a `cat >/dev/null`. Per thread (task/TID/io),
// because a process's own count takes in its reaped children's (the
// shell that reaps that cat); a holder or thread that exits in the window
// changes the sum (fail closed). ok is false when a
// count cannot be read or /proc is not this namespace's own.
func sessionWrites(stderr bool) (total int64, ok bool) {
	want, ok := outputIDs(stderr)
	if !ok {
		return 0, false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err != nil || pid == 1 || !holds(e.Name(), want) {
			continue
		}
		tasks, err := os.ReadDir("/proc/" + e.Name() + "/task")
		if err != nil {
			continue // exited meanwhile
		}
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/" + e.Name() + "/task/" + task.Name() + "/io")
			if err != nil {
				if _, gone := os.Stat("/proc/" + e.Name() + "/task/" + task.Name()); gone != nil {
					continue // exited meanwhile
				}
				return 0, false
			}
			n, ok := procio.Wchar(b)
			if !ok {
				return 0, false
			}
			total += n
		}
	}
	return total, true
}
