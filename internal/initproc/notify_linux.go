package initproc

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/lease"
)

// watchDir returns a channel that receives a value (coalesced) whenever the
// lease file in dir may have changed, and one that is closed if the watch
// stops working. It returns nil channels when inotify is unavailable.
//
// Only IN_MOVED_TO and IN_CLOSE_WRITE are asked for: the host renews by
// rename, and a writer that rewrites the file in place closes it. Fewer
// event kinds mean fewer wakeups while idle. The descriptor is non-blocking
// and read through the Go runtime's poller, so an idle init sleeps in one
// epoll wait instead of keeping a thread in a blocking read.
func watchDir(dir string) (<-chan struct{}, <-chan struct{}) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, nil
	}
	mask := uint32(unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_ONLYDIR)
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		unix.Close(fd)
		return nil, nil
	}
	f := os.NewFile(uintptr(fd), "inotify")
	events := make(chan struct{}, 1)
	gone := make(chan struct{})
	go readEvents(f, events, gone)
	return events, gone
}

func readEvents(f *os.File, events chan<- struct{}, gone chan<- struct{}) {
	defer close(gone)
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		if err != nil {
			return
		}
		hit, ignored := scanEvents(buf[:n])
		if hit {
			select {
			case events <- struct{}{}:
			default: // a wake is already pending; it re-reads the file
			}
		}
		if ignored {
			return
		}
	}
}

// scanEvents reports whether a batch concerns the lease file (or may have
// lost events), and whether the watch was removed.
func scanEvents(b []byte) (hit, ignored bool) {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			return true, ignored
		}
		name := b[unix.SizeofInotifyEvent:end]
		switch {
		case ev.Mask&unix.IN_Q_OVERFLOW != 0:
			hit = true
		case ev.Mask&(unix.IN_IGNORED|unix.IN_UNMOUNT) != 0:
			ignored = true
		case cstring(name) == lease.FileName:
			hit = true
		}
		b = b[end:]
	}
	return hit, ignored
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
