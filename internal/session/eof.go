//go:build unix

package session

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// EOFRule is what the end of host stdin does to a session.
type EOFRule string

// The rules. EOFAuto picks one by the kind of stdin (Config.eofRule).
const (
	EOFAuto EOFRule = ""
	// EOFEnd is the reference's single-shot rule: a peer still running
	// one second after host stdin's EOF is ended (0 if it sat idle, 125
	// eof-cut-output if it was still writing).
	EOFEnd EOFRule = "end"
	// EOFWait lets the peer run until it exits; the lease still bounds it.
	EOFWait EOFRule = "wait"
)

// eofWindow is how long a peer may outlive host stdin's EOF under EOFEnd
// (loki-init's completion window, which the none backend applies too).
const eofWindow = time.Second

// ParseEOFRule reads --eof.
func ParseEOFRule(s string) (EOFRule, error) {
	switch r := EOFRule(s); r {
	case EOFEnd, EOFWait:
		return r, nil
	case "auto":
		return EOFAuto, nil
	}
	return EOFAuto, fmt.Errorf("--eof %q: want end, wait or auto", s)
}

// eofRule resolves EOFAuto by the kind of stdin. Only a pipe or a socket
// is a client that can leave: its EOF is the client's hang-up (an editor
// closing an ACP agent's stdin), and the reference ends the session then.
// /dev/null, a regular file or a terminal reaches its end without anyone
// leaving (a script run from cron or CI, `< request.json`), so the peer
// runs until it exits; the lease still covers the supervisor's death.
func (c Config) eofRule() EOFRule {
	if c.EOF != EOFAuto {
		return c.EOF
	}
	if c.Stdin == nil || c.TTY {
		return EOFWait
	}
	if clientCanLeave(c.Stdin) {
		return EOFEnd
	}
	return EOFWait
}

// clientCanLeave reports a stdin that is a pipe or a socket.
func clientCanLeave(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

// hangup returns a channel closed once the client closed its end of
// stdin (POLLHUP on a pipe, POLLRDHUP on a socket), observed without
// reading: the descriptor is the peer's too. It waits in a blocking poll
// on a thread of its own for as long as the process lives, or until the
// descriptor fails. Any other stdin (/dev/null, a file) counts as at its
// end at once, as the relay to loki-init finds it.
func hangup(f *os.File) <-chan struct{} {
	c := make(chan struct{})
	if !clientCanLeave(f) {
		close(c)
		return c
	}
	sc, err := f.SyscallConn()
	fd := -1
	if err == nil {
		sc.Control(func(u uintptr) { fd = int(u) })
	}
	if fd < 0 {
		return c
	}
	go func() {
		fds := []unix.PollFd{{Fd: int32(fd), Events: pollRDHUP}}
		for {
			_, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err == nil && fds[0].Revents&(unix.POLLHUP|pollRDHUP|unix.POLLERR) == 0 {
				continue
			}
			if err == nil && fds[0].Revents&unix.POLLNVAL == 0 {
				close(c)
			}
			return
		}
	}()
	return c
}

// eofCut is the none backend's single-shot rule, which loki-init applies
// for the others: once host stdin hung up, a peer still running a window
// later is ended. Whether it was still writing is told by the process's
// write counters (Process.Writes): any change, or none to read, means its
// output was cut (fail closed).
type eofCut struct {
	ended   bool // the rule ended the peer
	writing bool // ... while it was still writing
}

// watch applies the rule to proc until done is closed; it returns what
// it did once done is closed.
func (e *eofCut) watch(proc Process, hup <-chan struct{}, done <-chan struct{}) {
	select {
	case <-hup:
	case <-done:
		return
	}
	before, ok := writes(proc)
	select {
	case <-time.After(eofWindow):
	case <-done:
		return
	}
	after, ok2 := writes(proc)
	e.ended, e.writing = true, !ok || !ok2 || before != after
	proc.Kill()
}

// writes is proc's output counter, where the backend keeps one.
func writes(p Process) (int64, bool) {
	if w, ok := p.(interface{ Writes() (int64, bool) }); ok {
		return w.Writes()
	}
	return 0, false
}
