//go:build unix

package session

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// feed writes the prelude and then relays stdin byte for byte; EOF on stdin
// closes the init's stdin. Its verdict is sent on done *before* the init's
// stdin is closed, so the verdict is in when the session can react to EOF.
// A closed far end (EPIPE: the init or the peer stopped reading) is the
// session's own choice, not a failure; anything else is.
func feed(w *os.File, prelude []byte, stdin *os.File, done chan<- error) {
	err := writeAll(w, prelude)
	if err == nil && stdin != nil {
		err = relayStdin(w, stdin)
	}
	if errors.Is(err, syscall.EPIPE) {
		err = nil
	}
	done <- err
	w.Close()
}

func writeAll(w *os.File, b []byte) error {
	_, err := w.Write(b)
	return err
}

// copyFallback is the portable relay: read/write through the runtime.
func copyFallback(dst, src *os.File) error {
	_, err := io.Copy(dst, src)
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
