package status

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Sink is where a stream goes: a descriptor the caller passed, or a file
// opened for append.
type Sink struct {
	f    *os.File
	file bool // a regular file of ours: synced at the end
}

// OpenFD takes descriptor fd, which the caller passed open (--status-fd).
func OpenFD(fd int) (*Sink, error) {
	if fd < 3 {
		return nil, fmt.Errorf("--status-fd %d: want a descriptor the caller opened, 3 or above (0-2 are the agent's stdio)", fd)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return nil, fmt.Errorf("--status-fd %d: not an open descriptor: pass one, e.g. 3>status.jsonl", fd)
	}
	unix.CloseOnExec(fd) // never the peer's: it is the supervisor's stream
	f := os.NewFile(uintptr(fd), "status-fd")
	st, err := f.Stat()
	return &Sink{f: f, file: err == nil && st.Mode().IsRegular()}, nil
}

// OpenFile opens path for append (created 0600; an existing file keeps
// its mode).
func OpenFile(path string) (*Sink, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--status-file: %w", err)
	}
	return &Sink{f: f, file: true}, nil
}

// writer moves lines from a bounded queue to the sink on a goroutine of
// its own, so a reader that is slow, stopped or gone costs lines (counted),
// never the session's time.
type writer struct {
	sink  *Sink
	q     chan []byte
	done  chan struct{}
	mu    sync.Mutex
	drops int64
	dead  bool // the sink failed: everything after is dropped
}

func newWriter(s *Sink) *writer {
	w := &writer{sink: s, q: make(chan []byte, MaxQueue), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *writer) run() {
	defer close(w.done)
	for line := range w.q {
		w.mu.Lock()
		dead := w.dead
		w.mu.Unlock()
		if dead {
			w.drop()
			continue
		}
		// One write per line: a reader never sees half of one unless
		// the write itself is cut, and O_APPEND keeps lines whole.
		if _, err := w.sink.f.Write(line); err != nil {
			w.mu.Lock()
			w.dead = true
			w.drops++
			w.mu.Unlock()
		}
	}
}

func (w *writer) drop() {
	w.mu.Lock()
	w.drops++
	w.mu.Unlock()
}

// put queues a line, or drops it when the queue is full.
func (w *writer) put(line []byte) {
	select {
	case w.q <- line:
	default:
		w.drop()
	}
}

func (w *writer) dropped() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.drops
}

// last queues the final line, waiting for room at most as long as put
// would not: it is dropped only when the queue stays full.
func (w *writer) last(line []byte) {
	select {
	case w.q <- line:
	case <-time.After(100 * time.Millisecond):
		w.drop()
	}
}

// close ends the queue and waits at most wait for it to be written; a
// file is synced, so what was written survives a crash of the host.
func (w *writer) close(wait time.Duration) {
	close(w.q)
	select {
	case <-w.done:
	case <-time.After(wait):
		return // a reader that never reads: its lines stay queued
	}
	if w.sink.file {
		w.sink.f.Sync()
	}
	w.sink.f.Close()
}
