package pid1

import (
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/pid1/facts"
)

// dialFacts connects to the host's facts socket (package facts), -1
// when there is none. Non-blocking: a full backlog is no facts, never a
// wait.
func dialFacts(dir string) int {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return -1
	}
	if unix.Connect(fd, &unix.SockaddrUnix{Name: filepath.Join(dir, facts.Socket)}) != nil {
		unix.Close(fd)
		return -1
	}
	return fd
}

// sendFact writes msg whole, or reports false: lines are short and the
// socket's buffer holds little else, so a write that would block means
// a host that stopped reading.
func sendFact(fd int, msg string) bool {
	b := []byte(msg)
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

// told sends the run's end to the host and returns the outcome to exit
// with: the same code, silent when the host took the line to print.
func (l *loop) told(err error) error {
	if l.facts < 0 {
		return err
	}
	defer unix.Close(l.facts)
	msg := l.endFact(err).Line() + "\n"
	say := exitcode.Report(err)
	if say != nil {
		msg += facts.SayLine(say.Error()) + "\n"
	}
	if !sendFact(l.facts, msg) || say == nil || exitcode.Code(err) != exitcode.Code(exitcode.Refused(nil)) {
		return err
	}
	return exitcode.Refused(nil)
}

// endFact is how the run ended, in the facts' words.
func (l *loop) endFact(err error) facts.End {
	var (
		r    *Refusal
		stop *Stopped
	)
	e := facts.End{Out: -1, In: -1}
	if !l.direct {
		e.Out, e.In = outMeter.total()+errMeter.total()+ttyBytes.Load(), inMeter.total()
	}
	code := exitcode.Code(err)
	switch {
	case errors.As(err, &stop):
		e.Class, e.Signal = facts.Stopped, int(stop.Killed)
	case errors.As(err, &r):
		e.Class, e.Stage, e.Signal = className(r.Err), string(r.Stage), r.Signal
	case errors.Is(err, exitcode.ErrLeaseExpired):
		e.Class = facts.LeaseExpired
	case errors.Is(err, exitcode.ErrSignalled):
		e.Class, e.Signal = facts.Shutdown, code-128
	case l.eofEnded:
		e.Class = facts.EOFEnded
	default:
		e.Class, e.Code = facts.Exit, code
	}
	return e
}
