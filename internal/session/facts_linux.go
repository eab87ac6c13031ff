package session

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loki-sh/loki/internal/pid1/facts"
)

// initFacts is what the init told (package facts), with its pid and the
// peer's as the host sees them (0: not known).
type initFacts struct {
	facts.Told
	initPID, peerPID int
}

// factsListener is the supervisor's end of the init's facts socket. It
// takes the first connection whose peer is the session's init (by pid,
// SO_PEERCRED: the peer shares the init's ids and sees the control dir,
// so it could connect too) and reads its lines until the init exits.
// Every method is safe on nil (no listener: the stream falls back to
// exit codes and timing).
type factsListener struct {
	ln        *os.File
	mu        sync.Mutex
	f         initFacts
	conn      *os.File      // the init's connection, once accepted
	peer      chan struct{} // closed at the peer's pid (or the reader's end)
	done      chan struct{} // closed when the reader ended
	said      chan struct{} // closed at EOF after the init's end line
	peerOnce  sync.Once
	finishing chan struct{}
	served    bool // serve was called (by the goroutine that calls finish)
	peerNS    int  // the reader's own copy: the peer was named
	closeOnce sync.Once
}

// factsBacklog bounds the connections waiting: the init makes one; a
// peer making more only fills the backlog, then its connects fail.
const factsBacklog = 8

// listenFacts binds the facts socket in the control dir, reachable by the
// group gid when the init runs with another one (gid >= 0), like the
// lease. nil when it cannot be made (a path too long for a socket).
func listenFacts(dir string, gid int) *factsListener {
	path := filepath.Join(dir, facts.Socket)
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	ok := unix.Bind(fd, &unix.SockaddrUnix{Name: path}) == nil
	mode := uint32(0o600)
	if ok && gid >= 0 {
		ok = unix.Fchownat(unix.AT_FDCWD, path, -1, gid, unix.AT_SYMLINK_NOFOLLOW) == nil
		mode = 0o660
	}
	ok = ok && unix.Fchmodat(unix.AT_FDCWD, path, mode, 0) == nil && unix.Listen(fd, factsBacklog) == nil
	if !ok {
		unix.Close(fd)
		os.Remove(path)
		return nil
	}
	return &factsListener{
		ln: os.NewFile(uintptr(fd), path), f: initFacts{Told: facts.New()},
		peer: make(chan struct{}), done: make(chan struct{}), said: make(chan struct{}), finishing: make(chan struct{}),
	}
}

// serve reads the init's facts; initPID says the init's host pid (0:
// not known, then the connector must be PID 1 of a PID namespace just
// below this one); wantPeer: find the peer's host pid.
func (l *factsListener) serve(initPID func() int, wantPeer bool) {
	if l == nil {
		return
	}
	l.served = true
	go func() {
		defer close(l.done)
		defer l.peerOnce.Do(func() { close(l.peer) })
		fd, pid := l.accept(initPID)
		if fd < 0 {
			return
		}
		conn := os.NewFile(uintptr(fd), "facts")
		defer conn.Close()
		l.mu.Lock()
		l.conn, l.f.initPID = conn, pid
		select {
		case <-l.finishing:
			conn.SetReadDeadline(time.Now().Add(factsDrain))
		default:
		}
		l.mu.Unlock()
		sc := bufio.NewScanner(io.LimitReader(conn, 64<<10))
		defer func() {
			// Its end line, then EOF: the init is done talking (a
			// connection closed without one says nothing).
			if l.snapshot().Ended {
				close(l.said)
			}
		}()
		for sc.Scan() {
			l.mu.Lock()
			l.f.Parse(sc.Text())
			ns := l.f.PeerNS
			l.mu.Unlock()
			if ns > 0 && l.peerNS == 0 {
				// Only a status stream shows the peer's host pid: the
				// /proc scan is not made for nothing, nor under the lock.
				l.peerNS = ns
				host := 0
				if wantPeer {
					host = hostPeer(pid, ns)
				}
				l.mu.Lock()
				l.f.peerPID = host
				l.mu.Unlock()
				l.peerOnce.Do(func() { close(l.peer) })
			}
		}
	}()
}

// accept returns the first connection made by the init (and its pid),
// -1 once finish was called and nothing authentic is left.
func (l *factsListener) accept(initPID func() int) (int, int) {
	rc, err := l.ln.SyscallConn()
	if err != nil {
		return -1, 0
	}
	for {
		fd := -1
		var aerr error
		try := func(u uintptr) bool {
			fd, _, aerr = unix.Accept4(int(u), unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK)
			return aerr != unix.EAGAIN
		}
		if err := rc.Read(try); err != nil {
			// finish: one more look at the backlog, without waiting,
			// for an init that connected and exited meanwhile.
			rc.Control(func(u uintptr) { try(u) })
			if fd < 0 {
				return -1, 0
			}
		}
		if fd < 0 {
			if errors.Is(aerr, unix.EINTR) || errors.Is(aerr, unix.ECONNABORTED) {
				continue
			}
			return -1, 0
		}
		if pid, ok := fromInit(fd, initPID()); ok {
			return fd, pid
		}
		unix.Close(fd)
	}
}

// fromInit reports whether the process connected on fd is the init.
func fromInit(fd, want int) (int, bool) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil || cred.Pid <= 0 {
		return 0, false
	}
	pid := int(cred.Pid)
	if want > 0 {
		return pid, pid == want
	}
	// Unknown pid (docker): PID 1 of a namespace one level below ours.
	// The peer cannot be that: a namespace it makes is below the init's.
	theirs, mine := nsPIDs(strconv.Itoa(pid)), nsPIDs("self")
	return pid, len(mine) > 0 && len(theirs) == len(mine)+1 && theirs[len(theirs)-1] == 1
}

// nsPIDs is the NSpid line of /proc/PID/status: the pid in each PID
// namespace, outermost first.
func nsPIDs(pid string) []int {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return nil
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			var out []int
			for w := range strings.FieldsSeq(v) {
				n, err := strconv.Atoi(w)
				if err != nil {
					return nil
				}
				out = append(out, n)
			}
			return out
		}
	}
	return nil
}

// hostPeer finds, among the init's children, the one whose pid in the
// init's namespace is ns: the peer as the host sees it (0: gone).
func hostPeer(initPID, ns int) int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(initPID) + "/task/*/children")
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for w := range strings.FieldsSeq(string(b)) {
			if p := nsPIDs(w); len(p) > 1 && p[len(p)-1] == ns {
				n, _ := strconv.Atoi(w)
				return n
			}
		}
	}
	return 0
}

// ended is closed once the init sent its end line and closed the
// connection (never on nil). The init does so after its loop is over,
// as its last act before exiting: it reads the lease no more and
// connects no more.
func (l *factsListener) ended() <-chan struct{} {
	if l == nil {
		return nil
	}
	return l.said
}

// factsDrain bounds the read of the init's last lines once it exited.
const factsDrain = time.Second

// waitPeer waits until the peer's pid is known, the init stopped
// talking, exited is closed, or d passed.
func (l *factsListener) waitPeer(exited <-chan struct{}, d time.Duration) {
	if l == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.peer:
	case <-exited:
	case <-t.C:
	}
}

// snapshot returns what the init said so far.
func (l *factsListener) snapshot() initFacts {
	if l == nil {
		return initFacts{Told: facts.New()}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f
}

// finish is called once the init has exited: it reads what is left (a
// connection still in the backlog included) and returns the facts.
func (l *factsListener) finish() initFacts {
	if l == nil || !l.served {
		l.close()
		return initFacts{Told: facts.New()}
	}
	l.mu.Lock()
	close(l.finishing)
	if l.conn != nil {
		l.conn.SetReadDeadline(time.Now().Add(factsDrain))
	}
	l.mu.Unlock()
	l.ln.SetReadDeadline(time.Now())
	select {
	case <-l.done:
	case <-time.After(2 * factsDrain):
	}
	l.close()
	return l.snapshot()
}

// close closes the listening socket (once; safe on nil).
func (l *factsListener) close() {
	if l != nil {
		l.closeOnce.Do(func() { l.ln.Close() })
	}
}
