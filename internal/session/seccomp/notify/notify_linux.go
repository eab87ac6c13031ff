//go:build linux

package notify

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/session/seccomp"
)

// Refusal is one refused call: the syscall's name, and for the first
// of each name the process that made it, as the host sees it (0 and ""
// when it was gone before it could be named).
type Refusal struct {
	Syscall string
	PID     int
	Comm    string
}

// The kernel's structures (linux/seccomp.h); their sizes are in the
// ioctl numbers.
type data struct {
	nr   int32
	arch uint32
	ip   uint64
	args [6]uint64
}

type notif struct {
	id    uint64
	pid   uint32
	flags uint32
	data  data
}

type resp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// Notifier serves one listener until Close or the session's end.
type Notifier struct {
	fd           int
	stopR, stopW int
	done         chan struct{}
}

// Serve answers the notifications of listener fd, which it owns from
// now on, calling report for each call answered (from its own thread:
// report must not block). A nil Notifier (no pipe for its stop) has
// closed fd, so the calls are refused with ENOSYS, unreported.
func Serve(fd int, report func(Refusal)) *Notifier {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		unix.Close(fd)
		return nil
	}
	n := &Notifier{fd: fd, stopR: p[0], stopW: p[1], done: make(chan struct{})}
	go n.loop(report)
	return n
}

// Close stops the reader and closes the listener: from then on the
// kernel refuses the filter's calls with ENOSYS. Safe on nil.
func (n *Notifier) Close() {
	if n == nil {
		return
	}
	unix.Write(n.stopW, []byte{0})
	<-n.done
	unix.Close(n.stopR)
	unix.Close(n.stopW)
}

func (n *Notifier) loop(report func(Refusal)) {
	// A thread of its own, never given back: the reader is never queued
	// behind the supervisor's other goroutines while a peer waits.
	runtime.LockOSThread()
	defer close(n.done)
	// Whatever ends the loop closes the listener, so a peer never waits
	// on a reader that is gone.
	defer unix.Close(n.fd)
	m := seccomp.NewMatcher()
	seen := map[string]bool{}
	fds := []unix.PollFd{{Fd: int32(n.fd), Events: unix.POLLIN}, {Fd: int32(n.stopR), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		switch {
		case fds[1].Revents != 0:
			return
		case fds[0].Revents&unix.POLLIN == 0:
			return // POLLHUP: every thread under the filter is gone
		}
		var req notif
		if err := ioctl(n.fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&req)); err != nil {
			if err == unix.ENOENT || err == unix.EINTR {
				continue // the caller was interrupted or killed meanwhile
			}
			return
		}
		name, errno := "", uint(seccomp.EPERM)
		if r, ok := m.Match(req.data.arch, uint32(req.data.nr), req.data.args); ok {
			name, errno = r.Name, r.Errno
		} else {
			name = "syscall-" + strconv.Itoa(int(req.data.nr))
		}
		var who Refusal
		if !seen[name] {
			who = identify(int(req.pid))
			// The tid named this caller only if it is still waiting.
			if ioctl(n.fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&req.id)) != nil {
				who = Refusal{}
			}
		}
		answer := resp{id: req.id, error: -int32(errno)}
		if err := ioctl(n.fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&answer)); err != nil {
			continue // ENOENT: interrupted; a restarted call comes again
		}
		seen[name] = true
		who.Syscall = name
		report(who)
	}
}

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

// identify reads the process (thread group) and command name of thread
// tid from /proc/TID/status.
func identify(tid int) Refusal {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return Refusal{}
	}
	var r Refusal
	for _, l := range bytes.Split(b, []byte("\n")) {
		k, v, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			continue
		}
		v = bytes.TrimLeft(v, "\t ")
		switch string(k) {
		case "Name":
			r.Comm = string(v)
		case "Tgid":
			r.PID, _ = strconv.Atoi(string(v))
		}
		if r.Comm != "" && r.PID != 0 {
			break
		}
	}
	return r
}
