package session

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/launch"
)

// terminal is the host terminal of a --tty session, and the settings it
// had before raw mode.
type terminal struct {
	fd    int
	saved unix.Termios
	raw   bool
}

// openTerminal takes f (the session's stdin) as the host terminal.
func openTerminal(f *os.File) (*terminal, error) {
	if f == nil {
		return nil, ErrNotTerminal
	}
	fd, ok := rawFD(f)
	if !ok {
		return nil, ErrNotTerminal
	}
	st, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, ErrNotTerminal
	}
	return &terminal{fd: fd, saved: *st}, nil
}

// size is the terminal's current size (0x0 when it reports none).
func (t *terminal) size() launch.Winsize {
	ws, err := unix.IoctlGetWinsize(t.fd, unix.TIOCGWINSZ)
	if err != nil {
		return launch.Winsize{}
	}
	return launch.Winsize{Rows: ws.Row, Cols: ws.Col}
}

// makeRaw passes every key through as a byte (cfmakeraw): ^C, ^Z and ^\
// then reach the peer's terminal, whose line discipline turns them into
// signals for the peer's foreground job, and nothing is echoed twice.
func (t *terminal) makeRaw() error {
	raw := t.saved
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(t.fd, unix.TCSETS, &raw); err != nil {
		return err
	}
	t.raw = true
	return nil
}

// restore puts back the settings the terminal had; it is idempotent.
func (t *terminal) restore() {
	if t.raw {
		unix.IoctlSetTermios(t.fd, unix.TCSETS, &t.saved)
		t.raw = false
	}
}

// watchResizes writes the terminal's size into the control dir on every
// SIGWINCH until stop is called. Notify comes before the caller reads the
// initial size, so no resize falls between the two.
func watchResizes(t *terminal, controlDir string) (stop func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, unix.SIGWINCH)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-c:
				writeWinsize(controlDir, t.size())
			}
		}
	}()
	return func() {
		signal.Stop(c)
		close(quit)
		<-done
	}
}
