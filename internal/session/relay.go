//go:build unix

package session

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// feed writes the prelude and then relays stdin byte for byte; EOF on stdin
// closes the init's stdin. Its verdict is sent on done *before* the init's
// stdin is closed, so the verdict is in when the session can react to EOF.
// A closed far end (EPIPE: the init or the peer stopped reading) is the
// session's own choice, not a failure; anything else is. With hs, no
// stdin byte follows the prelude into the pipe before the init has read
// the whole prelude (see handshake); an init that ends without reading it
// gets nothing more.
func feed(w *os.File, prelude []byte, stdin *os.File, done chan<- error, hs *handshake, o *outcome) {
	err := writeAll(w, prelude)
	if err == nil && hs != nil && !hs.await() {
		stdin = nil // the init is gone without its prelude
	}
	if err == nil && stdin != nil {
		err = relayStdin(w, stdin, &o.bytesIn)
		if err == nil {
			o.stdinEOF()
		}
	}
	if errors.Is(err, syscall.EPIPE) {
		err = nil
	}
	done <- err
	w.Close()
}

// handshake tells whether the init read the whole launch prelude: a
// program given as --init that is not loki-init (or one that fails before
// reading it) would otherwise end the session with its own code, 0 for
// /bin/true, though no peer ever ran. The feed keeps a descriptor of the
// pipe's read end: while only the prelude has been written, the bytes
// still in the pipe are exactly the part of it not read yet. Only the
// feed's goroutine uses it; the verdict comes back on result.
type handshake struct {
	keep    *os.File      // the read end of the init's stdin pipe
	gone    chan struct{} // closed when the init has exited
	written atomic.Bool   // the whole prelude is in the pipe
	result  chan bool     // await's verdict, once
}

func newHandshake(readEnd *os.File) *handshake {
	keep, err := dupFile(readEnd)
	if err != nil {
		return nil // no check: the session runs as before
	}
	return &handshake{keep: keep, gone: make(chan struct{}), result: make(chan bool, 1)}
}

// await waits until the prelude was read (true) or the init is gone
// (false unless it read it just before). It polls: a pipe says nothing
// when it is drained. The init reads the prelude right after its first
// lease renewal, so this lasts as long as the init's start; the polls are
// at most 1 ms apart, so stdin that is already waiting (a piped request)
// follows the prelude at most 1 ms late. The kept descriptor is closed before it returns,
// so the init's exit still ends the relay with EPIPE.
func (h *handshake) await() bool {
	h.written.Store(true)
	ok := h.poll()
	h.keep.Close()
	h.result <- ok
	return ok
}

func (h *handshake) poll() bool {
	delay := 100 * time.Microsecond
	for {
		if n, err := unread(h.keep); err != nil || n == 0 {
			return true
		}
		select {
		case <-h.gone:
			n, err := unread(h.keep)
			return err != nil || n == 0
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Millisecond)
	}
}

// read is the verdict once the init has exited: did it read the whole
// prelude? A prelude still being written (larger than the pipe, and
// nobody reading) was not read.
func (h *handshake) read() bool {
	close(h.gone)
	wait := time.Second
	if h.written.Load() {
		wait = time.Minute // await answers within one poll of gone
	}
	select {
	case ok := <-h.result:
		return ok
	case <-time.After(wait):
		return h.written.Load()
	}
}

func writeAll(w *os.File, b []byte) error {
	_, err := w.Write(b)
	return err
}

// copyFallback is the portable relay: read/write through the runtime.
func copyFallback(dst, src *os.File, moved *atomic.Int64) error {
	if isTerminal(src) {
		return copyTerminal(dst, src, moved)
	}
	n, err := io.Copy(dst, src)
	moved.Add(n)
	return err
}

// relayVerdict returns the feed's verdict if it has finished, else nil.
func relayVerdict(done <-chan error) error {
	select {
	case err := <-done:
		return err
	default:
		return nil
	}
}
