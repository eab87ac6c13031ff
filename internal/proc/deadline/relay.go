package deadline

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// sink is one output destination shared by a pump and the expiry report.
type sink struct {
	mu      sync.Mutex
	w       io.Writer
	midLine bool // the last byte written was not a newline
	failed  bool // a write failed: everything after is discarded
}

// write passes p through; it reports a write error once.
func (s *sink) write(p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return nil
	}
	if _, err := s.w.Write(p); err != nil {
		s.failed = true
		return err
	}
	s.midLine = p[len(p)-1] != '\n'
	return nil
}

// line writes a whole line of our own, starting a new line if a relayed
// chunk ended mid-line.
func (s *sink) line(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return
	}
	if s.midLine {
		p = append([]byte{'\n'}, p...)
	}
	if _, err := s.w.Write(p); err != nil {
		s.failed = true
	}
	s.midLine = false
}

// relay copies the runner's output and remembers when the last byte came.
type relay struct {
	start   time.Time
	lastOut atomic.Int64 // nanoseconds after start
	broken  chan struct{}
	once    sync.Once
	failure atomic.Value // error: a write failure other than EPIPE
	wg      sync.WaitGroup
}

func newRelay() *relay {
	return &relay{start: time.Now(), broken: make(chan struct{})}
}

// pump copies src to dst until EOF. After a write failure it keeps reading
// (and discarding), so the runner never blocks on a full pipe while it is
// being stopped.
func (r *relay) pump(src io.ReadCloser, dst *sink) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer src.Close()
		buf := make([]byte, 32*1024)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				r.lastOut.Store(int64(time.Since(r.start)))
				if werr := dst.write(buf[:n]); werr != nil {
					r.fail(werr)
				}
			}
			if err != nil {
				return
			}
		}
	}()
}

func (r *relay) fail(err error) {
	if !errors.Is(err, syscall.EPIPE) {
		r.failure.CompareAndSwap(nil, err)
	}
	r.once.Do(func() { close(r.broken) })
}

// idleFor is the time since the last output byte (or since start).
func (r *relay) idleFor() time.Duration {
	return time.Since(r.start) - time.Duration(r.lastOut.Load())
}

// drain waits until both pumps reached EOF, at most d; false on timeout.
func (r *relay) drain(d time.Duration) bool {
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
