package pid1

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/launch"
)

// ptmx is where the pty multiplexer of the init's own mount namespace is:
// the backend arranges for it to open a devpts instance private to the
// namespace (the namespace backend mounts a fresh one at /dev/pts, OCI
// runtimes and Docker do so by default).
var ptmx = "/dev/ptmx"

// openPTY allocates a pseudo-terminal of size ws and returns its master
// and slave, both close-on-exec. The slave is opened from the master
// (TIOCGPTPEER) where the kernel can, so no path lookup under /dev/pts can
// hand the peer another instance's terminal.
func openPTY(ws launch.Winsize) (master, slave int, err error) {
	master, err = unix.Open(ptmx, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, -1, fmt.Errorf("%w: open %s: %w", ErrSpawn, ptmx, err)
	}
	fail := func(step string, err error) (int, int, error) {
		unix.Close(master)
		return -1, -1, fmt.Errorf("%w: %s: %w", ErrSpawn, step, err)
	}
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		return fail("unlockpt", err)
	}
	if err := setWinsize(master, ws); err != nil {
		return fail("set window size", err)
	}
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(master), unix.TIOCGPTPEER,
		uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if errno == 0 {
		return master, int(r), nil
	}
	if errno != unix.EINVAL && errno != unix.ENOTTY {
		return fail("open the slave", errno)
	}
	// Before Linux 4.13: the slave by name.
	n, err := unix.IoctlGetInt(master, unix.TIOCGPTN)
	if err != nil {
		return fail("ptsname", err)
	}
	name := filepath.Join(filepath.Dir(ptmx), "pts", strconv.Itoa(n))
	slave, err = unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail("open the slave", err)
	}
	return master, slave, nil
}

// setWinsize sets the terminal's size; when it changes, the kernel sends
// SIGWINCH to the terminal's foreground process group.
func setWinsize(master int, ws launch.Winsize) error {
	return unix.IoctlSetWinsize(master, unix.TIOCSWINSZ, &unix.Winsize{Row: ws.Rows, Col: ws.Cols})
}

// ttyAttr makes the peer a session leader whose controlling terminal is
// its stdin (the slave): its process group is then the terminal's
// foreground group, so ^C, ^Z and ^\ typed on the host reach it as
// SIGINT, SIGTSTP and SIGQUIT through the line discipline.
func ttyAttr(pidfd *int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, PidFD: pidfd}
}

// readWinsize reads the host's latest resize from the control dir; ok is
// false when there is none or it is malformed (never applied then).
func readWinsize(controlDir string) (launch.Winsize, bool) {
	fd, err := unix.Open(filepath.Join(controlDir, launch.WinsizeFile),
		unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return launch.Winsize{}, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return launch.Winsize{}, false
	}
	var buf [16]byte
	n := 0
	for n < len(buf) {
		k, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return launch.Winsize{}, false
		}
		if k == 0 {
			break
		}
		n += k
	}
	return launch.ParseWinsize(buf[:n])
}

// forwardTTY copies the terminal's output (the master) to dst until every
// holder of the slave has closed it: the master then reads EIO, which is
// the terminal's end of file (the kernel flushes what the peer wrote
// first). The master waits in the runtime's poller; it is the init's own
// file description, so making it non-blocking touches no one else's.
func forwardTTY(dst, master int, done chan<- forwarded) {
	eof, err := pumpTTY(dst, master)
	done <- forwarded{s: streamOut, eof: eof, err: err}
}

// ttyBytes counts the terminal's output moved to the host: reported with
// the output meters' counts, but kept out of the stdin-EOF rule, which never read a
// terminal's output (echo included) as the peer still writing.
var ttyBytes atomic.Int64

func pumpTTY(dst, master int) (eof bool, err error) {
	dup, err := unix.FcntlInt(uintptr(master), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return false, err
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		return false, err
	}
	f := os.NewFile(uintptr(dup), "pty-master")
	defer f.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if werr := writeAll(dst, buf[:n]); werr != nil {
				return false, werr
			}
			ttyBytes.Add(int64(n))
		}
		switch {
		case err == nil:
		case errors.Is(err, syscall.EIO), errors.Is(err, io.EOF):
			return true, nil
		default:
			return false, err
		}
	}
}
