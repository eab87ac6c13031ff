//go:build unix

package session

import (
	"errors"
	"fmt"

	"github.com/loki-sh/loki/internal/exitcode"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/status"
)

// Capabilities is what a backend gives, as data: the session admits or
// refuses a policy by them alone (Admit), and doctor prints them. A
// backend computes them when asked, from what the host decides (root,
// cgroup controllers): each session asks once.
type Capabilities struct {
	// Init: the backend runs loki-init, which speaks the lease and
	// prelude protocol; false means Start runs Request.Peer directly and
	// the supervisor relays without a lease.
	Init bool
	// Knobs declares every confine.Knob: given, or refused with the
	// alternative. A knob a backend does not declare is refused.
	Knobs map[confine.Knob]Support
	// PrivateUserNS: under a root supervisor, a policy that asks for a
	// private user namespace (confine.Policy.PrivateUserNS) gets one, its
	// init running with confine.PrivateRange's gid, to which the control
	// dir and lease are then made readable.
	PrivateUserNS bool
	// DirectStdinFD > 0 is the descriptor Request.HostStdin has in the
	// init: the client's own stdin is passed instead of relayed.
	DirectStdinFD int
	// MinPidsMax > 0 is the smallest --pids-max the backend gives: where
	// loki-init always shares the session's pids limit with the peer
	// (a runtime placed it), its own threads count too.
	MinPidsMax int64
	// CopiesStdin: the backend's own client reads the init's stdin pipe
	// (docker run -i), draining it whether or not the init reads, so the
	// supervisor cannot see whether the prelude was read.
	CopiesStdin bool
	// Observes are the refusal kinds the backend reports to the
	// session's status stream (Request.Status, Exit.Limit); the stream's
	// start event says the others are not observed, and why.
	Observes []status.Kind
	// Syscalls names the syscall policy the peer runs under: seccomp.Name
	// wherever loki-init runs (no knob: nothing turns it off), "none"
	// where the peer is the supervisor's own child.
	Syscalls string
}

// Support is how a backend declares one knob.
type Support struct {
	Given bool
	// Fix, for a knob not given: what to do instead, one clause.
	Fix string
}

// Given declares a knob the backend applies in full.
var Given = Support{Given: true}

// Refused declares a knob the backend cannot give, and what to do instead.
func Refused(fix string) Support { return Support{Fix: fix} }

// Admit is the one place a session's policy is judged: its flags
// against each other (confine.Policy.Validate: a usage error), then each
// knob it asks for (with tty, the -t flag) against what the backend
// named declares it gives. A refusal is one line naming the backend, the
// knob and the alternative, wrapping confine.ErrUnsupported (exit 127).
func Admit(name string, c Capabilities, p confine.Policy, tty bool) error {
	if err := p.Validate(); err != nil {
		return err
	}
	asked := p.Asks()
	if tty {
		asked = append(asked, confine.KnobTTY)
	}
	for _, k := range asked {
		s, ok := c.Knobs[k]
		switch {
		case !ok:
			return confine.Refuse(name, string(k), "this backend does not declare it; use --isolation namespace")
		case !s.Given:
			return confine.Refuse(name, string(k), s.Fix)
		}
	}
	if n := p.Resources.PidsMax; n > 0 && n < c.MinPidsMax {
		return confine.Refuse(name, fmt.Sprintf("--pids-max %d (loki-init's own threads count against it)", n),
			fmt.Sprintf("use --pids-max %d or more", c.MinPidsMax))
	}
	return nil
}

// admit runs Admit for cfg, as exit codes: 2 for a policy at odds with
// itself, 127 for one the backend cannot give.
func admit(cfg Config, c Capabilities) error {
	err := Admit(cfg.Backend.Name(), c, cfg.Confine, cfg.TTY)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, confine.ErrPolicy):
		return exitcode.Usage(err)
	}
	return exitcode.NotLaunched(err)
}
