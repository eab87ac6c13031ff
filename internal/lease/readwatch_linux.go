package lease

import (
	"bytes"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// WatchReads is for the host: it reports (coalesced) every time someone
// finishes a read-only open of the lease in dir. During start-up that is
// the init taking its baseline, the moment a renewal becomes useful to it
// (the init watches for renewals before it takes the baseline, so a
// renewal made on this report is never missed). The Writer never opens
// the lease read-only. Returns a nil channel
// when inotify is unavailable; stop releases the watch (at once, without
// waiting for the kernel) and may be called more than once.
func WatchReads(dir string) (reads <-chan struct{}, stop func()) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, func() {}
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_NOWRITE|unix.IN_ONLYDIR); err != nil {
		unix.Close(fd)
		return nil, func() {}
	}
	f := os.NewFile(uintptr(fd), "lease-reads") // non-blocking: read through the poller
	ch := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if err != nil {
				return // closed by stop
			}
			if namesLease(buf[:n]) {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	}()
	// Closing an inotify descriptor waits for an SRCU grace period in the
	// kernel (fsnotify_destroy_group), often milliseconds: never on the
	// renewal path or the session's exit path.
	var once sync.Once
	return ch, func() { once.Do(func() { go f.Close() }) }
}

// namesLease reports whether any inotify event in b is about the lease.
func namesLease(b []byte) bool {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			return false
		}
		name := b[unix.SizeofInotifyEvent:end]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if string(name) == FileName {
			return true
		}
		b = b[end:]
	}
	return false
}
