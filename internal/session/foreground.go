//go:build unix

package session

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A supervisor started in the background of an interactive shell
// (`loki-supervise session -- CMD &`) still has the terminal as stdin. Its
// read would stop it with SIGTTIN ("Stopped (tty input)"), and a stopped
// supervisor renews no lease, so the agent would be killed for it. So
// SIGTTIN is ignored while a session relays a terminal (a background read
// then fails with EIO instead of stopping the process), and the relay
// waits, without reading, until its process group is in the foreground
// again (`fg`).

// ignoreTTIN ignores SIGTTIN when stdin is a terminal; the returned
// function restores the default.
func ignoreTTIN(stdin *os.File) (restore func()) {
	if stdin == nil || !isTerminal(stdin) {
		return func() {}
	}
	signal.Ignore(syscall.SIGTTIN)
	return func() { signal.Reset(syscall.SIGTTIN) }
}

// foregroundEvery is how often a relay held back in the background checks
// whether it was brought to the foreground.
const foregroundEvery = 100 * time.Millisecond

// copyTerminal copies a terminal to dst, reading only while this process
// group is the terminal's foreground group.
func copyTerminal(dst io.Writer, src *os.File, moved *atomic.Int64) error {
	fd := int(src.Fd())
	buf := make([]byte, 32<<10)
	for {
		for background(fd) {
			time.Sleep(foregroundEvery)
		}
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return werr
			}
			moved.Add(int64(n))
		}
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, syscall.EIO) && background(fd):
			// Sent to the background between the check and the read.
		case err != nil:
			return err
		}
	}
}

// background reports whether fd is a terminal whose foreground process
// group is not ours.
func background(fd int) bool {
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pgrp != unix.Getpgrp()
}

// isTerminal reports a stdin that is this process's controlling
// terminal (it has a foreground process group for us): the only kind
// whose read can stop us.
func isTerminal(f *os.File) bool {
	sc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	sc.Control(func(fd uintptr) {
		_, err := unix.IoctlGetInt(int(fd), unix.TIOCGPGRP)
		ok = err == nil
	})
	return ok
}
