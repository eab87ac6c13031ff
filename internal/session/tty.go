package session

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/loki-sh/loki/internal/launch"
)

// ErrNotTerminal refuses a terminal session whose stdin is not a terminal.
var ErrNotTerminal = errors.New("--tty needs a terminal on stdin")

// writeWinsize publishes a resize to the init: a temp file in the control
// dir renamed over launch.WinsizeFile, so the init never reads a torn
// value and is woken by the same rename notification as for the lease.
func writeWinsize(controlDir string, ws launch.Winsize) error {
	tmp, err := os.CreateTemp(controlDir, ".winsize-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	// Readable by an init that runs with other ids (--user, a private
	// user namespace): the control dir already admits only its group,
	// and a window size is no secret.
	err = tmp.Chmod(0o644)
	if err == nil {
		_, err = tmp.Write(launch.AppendWinsize(nil, ws))
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, filepath.Join(controlDir, launch.WinsizeFile))
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

// crlf turns "\n" into "\r\n": the supervisor's own notes reach a
// terminal in raw mode, where a bare newline does not return the cursor.
type crlf struct{ w io.Writer }

func (c crlf) Write(b []byte) (int, error) {
	if _, err := c.w.Write(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// crlfPipe is the init's stderr in a terminal session: only the init's
// (or the runtime's) own lines come through it, the peer's stderr being
// the pty. They reach the host terminal while it is in raw mode, so each
// newline gets its carriage return. done is closed once every writer
// closed the pipe and everything was copied.
func crlfPipe(dst *os.File) (w *os.File, done <-chan struct{}, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	c := make(chan struct{})
	go func() {
		defer close(c)
		defer r.Close()
		io.Copy(crlf{dst}, r)
	}()
	return w, c, nil
}

// closedChan is a done channel with nothing to wait for.
var closedChan = func() <-chan struct{} { c := make(chan struct{}); close(c); return c }()

// drainBound is how long a session waits for its stderr lines after the
// started process exited (a process it left behind may hold the pipe).
const drainBound = time.Second

func drained(done <-chan struct{}) {
	select {
	case <-done:
	case <-time.After(drainBound):
	}
}
