package pid1

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/launch"
	"github.com/loki-sh/loki/internal/lease"
)

// watch is an inotify watch on the control dir.
type watch struct {
	f      *os.File
	resize chan struct{} // a value (coalesced) when the host resized the terminal
	gone   chan struct{} // closed once the watch stops working
	fd, wd int
}

// watchDir watches dir for replacements of the lease file; start reads
// the events. It returns a watch with nil channels when inotify is
// unavailable.
//
// Only IN_MOVED_TO is asked for: the host renews by rename (Contract 1),
// so each renewal is one event and one wakeup (the temp file's close would
// be a second one). A writer that rewrites the file in place is still seen
// by the guard's check timer, which then falls back to polling. The
// descriptor is non-blocking and read through the Go runtime's poller, so
// an idle init sleeps in one epoll wait instead of keeping a thread in a
// blocking read.
func watchDir(dir string) watch {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return watch{fd: -1}
	}
	mask := uint32(unix.IN_MOVED_TO | unix.IN_ONLYDIR)
	wd, err := unix.InotifyAddWatch(fd, dir, mask)
	if err != nil {
		unix.Close(fd)
		return watch{fd: -1}
	}
	return watch{f: os.NewFile(uintptr(fd), "inotify"), resize: make(chan struct{}, 1), gone: make(chan struct{}), fd: fd, wd: wd}
}

// ok reports whether notifications are available.
func (w watch) ok() bool { return w.f != nil }

// start reads the events on a goroutine of its own, which calls lease for
// every batch that may concern the lease file. Events that arrived since
// watchDir are in the queue already.
func (w watch) start(lease func()) {
	if w.f != nil {
		go readEvents(w.f, lease, w.resize, w.gone)
	}
}

// stop removes the watch. It must run before the init exits: the kernel
// frees a watch still attached at close only after an SRCU grace period,
// and an exiting PID 1 waits for it (docs/loki-init.md has the cost),
// while inotify_rm_watch hands the
// mark to the kernel's background reaper and returns at once. The
// descriptor itself stays open until exit (closing it would wait too).
func (w watch) stop() {
	if w.fd >= 0 && w.wd > 0 {
		unix.InotifyRmWatch(w.fd, uint32(w.wd))
	}
}

func readEvents(f *os.File, lease func(), resize, gone chan<- struct{}) {
	defer close(gone)
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 4096)
	for {
		n, err := readRaw(rc, buf)
		if err != nil || n <= 0 {
			return
		}
		hit, resized, ignored := scanEvents(buf[:n])
		if hit {
			lease()
		}
		if resized {
			wake(resize)
		}
		if ignored {
			return
		}
	}
}

// readRaw reads once, parking in the runtime's poller while nothing is
// queued. The read itself is a raw system call: an inotify read never
// blocks (the descriptor is non-blocking), and a raw call does not wake
// the runtime's sysmon thread from its deep sleep, which every ordinary
// system call of an idle process does (a wakeup per renewal for nothing).
func readRaw(rc syscall.RawConn, buf []byte) (int, error) {
	var n int
	var errno unix.Errno
	err := rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
			if e == unix.EINTR {
				continue
			}
			n, errno = int(r), e
			return e != unix.EAGAIN
		}
	})
	if err != nil {
		return 0, err
	}
	if errno != 0 {
		return 0, errno
	}
	return n, nil
}

// scanEvents reports whether a batch concerns the lease file (or may have
// lost events), whether it names the winsize file (or may have lost
// events), and whether the watch was removed.
func scanEvents(b []byte) (hit, resized, ignored bool) {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			return true, true, ignored
		}
		name := b[unix.SizeofInotifyEvent:end]
		switch {
		case ev.Mask&unix.IN_Q_OVERFLOW != 0:
			hit, resized = true, true
		case ev.Mask&(unix.IN_IGNORED|unix.IN_UNMOUNT) != 0:
			ignored = true
		case cstring(name) == lease.FileName:
			hit = true
		case cstring(name) == launch.WinsizeFile:
			resized = true
		}
		b = b[end:]
	}
	return hit, resized, ignored
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
