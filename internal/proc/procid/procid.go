//go:build unix

package procid

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors.
var (
	ErrGone        = errors.New("process is gone")
	ErrImprecise   = errors.New("birth token is not precise enough to authorise a signal")
	ErrUnsupported = errors.New("process identity is not supported on this platform")
)

// Identity is a process proven, at capture time, to have had a signal-safe
// birth token. The zero value is invalid.
type Identity struct {
	pid   int
	token string
	// ino is the process's pidfs inode number when it was captured alive
	// on Linux (0 otherwise). Birth tokens count clock ticks, so a pid
	// reused within one tick (10 ms) gets the same token; the pidfs inode
	// is unique per process for the whole boot, so an identity captured
	// in this process tells even those apart. It is not persisted: the
	// record keeps the reference's token format.
	ino uint64
}

// PID returns the process id.
func (id Identity) PID() int { return id.pid }

// Token returns the birth token.
func (id Identity) Token() string { return id.token }

// Valid reports whether id was made by Capture or Restore.
func (id Identity) Valid() bool { return id.pid > 0 && id.token != "" }

func (id Identity) String() string { return fmt.Sprintf("%d@%s", id.pid, id.token) }

// Capture reads the birth token of a live process. It fails unless the token
// is signal-safe.
func Capture(pid int) (Identity, error) {
	if pid <= 0 {
		return Identity{}, fmt.Errorf("procid: pid %d: %w", pid, ErrGone)
	}
	tok, err := BirthToken(pid)
	if err != nil {
		return Identity{}, err
	}
	if !SignalSafe(tok) {
		return Identity{}, fmt.Errorf("procid: pid %d: %w", pid, ErrImprecise)
	}
	return Identity{pid: pid, token: tok, ino: pidInode(pid)}, nil
}

// Restore rebuilds an Identity from a record (e.g. state.json). The token
// must be signal-safe; whether it still names a live process is for Matches.
func Restore(pid int, token string) (Identity, error) {
	if pid <= 0 {
		return Identity{}, fmt.Errorf("procid: pid %d: %w", pid, ErrGone)
	}
	if !SignalSafe(token) {
		return Identity{}, fmt.Errorf("procid: pid %d: %w", pid, ErrImprecise)
	}
	return Identity{pid: pid, token: token}, nil
}

// Matches reports whether the pid is live, not a zombie, and still has the
// recorded birth token. Any doubt is false: fail closed.
func (id Identity) Matches() bool {
	if !id.Valid() {
		return false
	}
	st, err := Stat(id.pid)
	if err != nil || st.State == 'Z' || st.State == 'X' {
		return false
	}
	tok, err := BirthToken(id.pid)
	if err != nil || tok != id.token {
		return false
	}
	return id.ino == 0 || pidInode(id.pid) == id.ino
}

// SignalSafe is true only for tokens precise enough to authorise a signal:
// "proc:<non-empty boot id>:<digits>" or "darwin:<digits>:<digits>".
func SignalSafe(token string) bool {
	parts := strings.Split(token, ":")
	if len(parts) != 3 {
		return false
	}
	switch parts[0] {
	case "proc":
		return parts[1] != "" && digits(parts[2])
	case "darwin":
		return digits(parts[1]) && digits(parts[2])
	}
	return false
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// psToken is the imprecise fallback: one-second resolution, locale-dependent.
// It is recorded for humans and never authorises a signal.
func psToken(pid int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ps", "-o", "lstart=", "-p", strconv.Itoa(pid)).Output()
	started := strings.TrimSpace(string(out))
	if err != nil || started == "" {
		return "", fmt.Errorf("procid: pid %d: %w", pid, ErrGone)
	}
	return "ps:" + started, nil
}
